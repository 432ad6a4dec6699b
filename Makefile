# Every target works on a fresh checkout. `make test` is what CI runs (.ci/run).
GO      ?= go
# Nested modules (e.g. status/etcdstore) are not reached by a root `go test ./...`.
# Modules under testdata are test inputs (statuslint's corpus), not ours to vet.
NESTED  := $(patsubst %/go.mod,%,$(shell find . -mindepth 2 -name go.mod -not -path './.git/*' -not -path '*/testdata/*' | sort))
GOFILES  = $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go')

.PHONY: test deps fmt-check tidy-check vet lint crash cross python unit bench bench-peers fuzz demo soak powerloss

# The steps of make test, in order. The last two run at once: the Python
# package's tests mostly wait (on locks, on the processes they start), as
# the Go tests do, so python runs beside unit and its output follows
# unit's.
STEPS = deps fmt-check tidy-check lint crash cross python unit
test: $(filter-out python unit,$(STEPS))
	@mkdir -p $(CURDIR)/.bin
	@echo "python: runs beside unit; its output follows unit's"
	@$(MAKE) --no-print-directory python > $(CURDIR)/.bin/python.out 2>&1 & py=$$!; \
	$(MAKE) --no-print-directory unit; unit=$$?; \
	wait $$py; python=$$?; cat $(CURDIR)/.bin/python.out; \
	[ $$python -eq 0 ] || echo "python: FAILED (its output is above)"; \
	[ $$unit -eq 0 ] && [ $$python -eq 0 ]

# The cross-language tests run python3 from PATH. The Python package's own
# steps run the system's python3 (Debian's, where mypy comes from its
# packages) when there is one.
PYTHON ?= $(shell if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else echo python3; fi)
MYPY   ?= $(PYTHON) -m mypy

# Tools some tests need (strace for the syscall-order test, python3 for the
# cross-language tests, jq for the flock(1)+jq client of the transaction
# tests, and for the Python package: venv and pip to install it (its build
# backend is its own), mypy to type-check it). CI runs as root on a clean Debian
# machine: install them instead of letting the tests skip. Nothing comes
# from a Python package registry.
deps:
	@if ! command -v strace >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing strace"; \
		(apt-get update -qq && apt-get install -y -qq strace) >/dev/null; \
	fi
	@if ! command -v python3 >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing python3"; \
		(apt-get update -qq && apt-get install -y -qq python3) >/dev/null; \
	fi
	@if ! command -v jq >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing jq"; \
		(apt-get update -qq && apt-get install -y -qq jq) >/dev/null; \
	fi
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		pkgs=""; \
		$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || pkgs="$$pkgs python3-venv"; \
		$(PYTHON) -m pip --version >/dev/null 2>&1 || pkgs="$$pkgs python3-pip"; \
		$(MYPY) --version >/dev/null 2>&1 || pkgs="$$pkgs python3-mypy"; \
		if [ -n "$$pkgs" ]; then \
			echo "installing$$pkgs"; \
			(apt-get update -qq && apt-get install -y -qq $$pkgs) >/dev/null; \
		fi; \
	fi

# The Python package: its unit tests against the source tree; mypy --strict
# under the rules of its oldest Python (python/pyproject.toml), for Linux,
# macOS and Windows (where it imports and reads, and refuses to lock), of the
# package and its build backend; then the install python/README.md documents,
# with each interpreter: the python3 on PATH (a pyenv build there has a
# setuptools that cannot build a wheel without the wheel package) and
# $(PYTHON). Each gets a fresh venv without system site packages (so neither
# setuptools nor wheel is importable: the step checks it), one pip install
# --no-index from a copy of python/, and the unit tests again against the
# installed package. With CI=true a skipped Python test fails the run, as for
# Go (python/tests/run.py).
python:
	@echo "python: the Python package (python/): its tests, mypy --strict, an install into a fresh venv of each python3 and its tests again"
	$(PYTHON) python/tests/run.py
	cd python && for platform in linux darwin win32; do $(MYPY) --platform $$platform src/agentstate _backend || exit 1; done
	@for py in $$( (python3 -c 'import sys; print(sys.executable)'; $(PYTHON) -c 'import sys; print(sys.executable)') | awk '!seen[$$0]++'); do \
		tmp=$$(mktemp -d) && \
		cp -R python $$tmp/checkout && rm -rf $$tmp/checkout/build $$tmp/checkout/dist && \
		$$py -m venv $$tmp/venv && \
		if $$tmp/venv/bin/python -c 'import wheel' 2>/dev/null; then echo "python: the venv of $$py has wheel: the test needs one without"; rm -rf $$tmp; exit 1; fi && \
		(cd $$tmp && venv/bin/python -m pip install --quiet --no-index ./checkout) && \
		echo "python: installed $$($$tmp/venv/bin/python -m pip show agentstate-core | grep -E '^(Name|Version)' | tr '\n' ' ')with $$py ($$($$py -V 2>&1), no wheel)" && \
		(cd $$tmp && venv/bin/python checkout/tests/run.py --installed); \
		status=$$?; rm -rf $$tmp; [ $$status -eq 0 ] || exit $$status; \
	done

# Every module's go.mod and go.sum as go mod tidy leaves them: the nested
# modules replace core with this checkout, so a change to core's requirements
# must be carried into theirs in the same commit.
tidy-check:
	@echo "tidy-check: go mod tidy -diff in each module ($(words . $(NESTED)); downloads their requirements the first time)"
	@for m in . $(NESTED); do (cd $$m && $(GO) mod tidy -diff) || { echo "go mod tidy would change $$m"; exit 1; }; done

fmt-check:
	@out="$$(gofmt -l $(GOFILES))"; \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# go vet of every module, alone. make test does not run it: its unit step
# vets every package with all of vet's checks as part of the test build
# (go test -vet=all), which shares that build's compilation.
vet:
	@echo "vet: go vet in each module (on an empty build cache a few minutes: it compiles every package and its dependencies)"
	$(GO) vet ./...
	@for m in $(NESTED); do echo "vet $$m"; (cd $$m && $(GO) vet ./...) || exit 1; done

# Our own analyzer over our own code: no bare read-modify-write or in-place
# write of JSON state files outside status.Mutate / fs.WriteAtomic. (Tests
# hold deliberate controls of the unsafe patterns, which run concurrently,
# hence -test=false.)
lint:
	@echo "lint: statuslint over the module's own code"
	$(GO) build -buildvcs=false -o $(CURDIR)/.bin/statuslint ./cmd/statuslint
	$(CURDIR)/.bin/statuslint -test=false ./...

# statuslint must not crash on any package that type-checks. It runs over
# the standard library (-std: its bodies too), golang.org/x/tools and real
# modules with the shapes that once crashed it, all dependencies of the test
# module cmd/statuslint/testdata/corpus (the go command downloads them).
# Findings are expected there; a panic, an internal error or a package that
# fails to load fails the step. In two runs, to bound the memory a run takes.
# Its inputs are fixed (the statuslint binary, the Go release, the corpus
# module and the versions it requires), so, as go test caches a test's
# result, a pass is recorded in .bin/crash.ok with a hash of them and not
# repeated while they are the same (a fresh clone, as CI's, always runs it;
# `rm .bin/crash.ok` runs it again). The binary is built without VCS
# stamping, which would change it at every commit.
CRASH_MODULES = golang.org/x/tools/... code.gitea.io/sdk/gitea/... github.com/go-git/go-billy/v5/... \
	github.com/zclconf/go-cty/... github.com/spf13/afero/... github.com/spf13/viper/... \
	github.com/gofrs/flock/... github.com/knadh/koanf/... github.com/rogpeppe/go-internal/... \
	statuslint.test/corpus/...
crash:
	@echo "crash: statuslint over the standard library and real modules (the first time, the go command downloads them); fails on a panic or a package that does not load"
	$(GO) build -buildvcs=false -o $(CURDIR)/.bin/statuslint ./cmd/statuslint
	@cd cmd/statuslint/testdata/corpus && \
	key=$$( { cat $(CURDIR)/.bin/statuslint; $(GO) env GOVERSION GOROOT GOOS GOARCH GOFLAGS; echo "$(CRASH_MODULES)"; \
		find . -type f | LC_ALL=C sort | xargs cat; } | sha256sum | cut -d' ' -f1); \
	if [ "$$(cat $(CURDIR)/.bin/crash.ok 2>/dev/null)" = "$$key" ]; then \
		echo "crash: passed before with the same statuslint, Go and corpus (.bin/crash.ok): not run again"; exit 0; \
	fi; \
	rm -f $(CURDIR)/.bin/crash.ok; \
	for set in "-std std" "$(CRASH_MODULES)"; do \
		start=$$(date +%s); \
		$(CURDIR)/.bin/statuslint -test=false $$set > $(CURDIR)/.bin/crash.out 2>&1; code=$$?; \
		n=$$(grep -c 'read-modify-write\|not atomic' $(CURDIR)/.bin/crash.out); \
		echo "crash corpus $${set%% *}...: exit $$code, $$n findings, $$(( $$(date +%s) - start ))s"; \
		if [ $$code -ne 0 ] && [ $$code -ne 3 ] || grep -q 'internal error\|^panic\|fatal error' $(CURDIR)/.bin/crash.out; then \
			tail -40 $(CURDIR)/.bin/crash.out; exit 1; \
		fi; \
	done; \
	echo "$$key" > $(CURDIR)/.bin/crash.ok

# The agent services also run on macOS (and some tools on Windows): the
# module's packages are built for both, which catches a build break there.
# Not in every run: go vet of the tests for both systems (which compiles
# their test-only dependencies too: about 1.6 times the build on an empty
# build cache), nor the nested modules, whose per-system code is test
# support and the Linux-only peer benchmark, and whose check compiled the
# etcd client's dependencies twice.
cross:
	@echo "cross: go build of the module for darwin and windows (the first time, compiles the standard library for each: a few minutes)"
	GOOS=darwin  GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

# Every module's tests through internal/cmd/testsummary: one line per package
# (passed, failed, skipped), failed tests with their output, every skip with its
# reason, and a last line "total: N passed, N failed, N skipped". With CI=true
# (.ci/run) a skipped test not listed in .ci/allowed-skips fails the run. The
# crashhooks tag builds the test switches (each package's TestSeams: crash
# points, the controls' switches), which the tests that need one skip without.
# The go test -json events are kept in .bin/unit.json: `go run
# ./internal/cmd/timings report .bin/unit.json` lists the slowest tests.
#
# go vet runs inside the test build (-vet=all: every check, not go test's
# default subset), on the packages as that build sees them. The files it
# leaves out (//go:build !race or !crashhooks) are vetted after it, in the
# packages where the default build's files differ from the test build's.
#
# The etcd member program the etcdstore tests start (built without -race:
# status/etcdstore/internal/etcdtest/member) is built once, before them.
#
# Most tests spend their time waiting (fsync, child processes, peers they
# killed), so testsummary runs the modules' go test at once, and each runs
# UNIT_P packages at once (go test's default is one per CPU). The packages
# that take longest (`go run ./internal/cmd/timings report .bin/unit.json`
# lists them) start first, so that they do not end last.
#
# A package's tests may take 20 minutes rather than go test's default 10:
# with two runs of make test at once on a 2-core machine and other jobs
# (load average 35), internal/proof/status, which takes minutes quiet, ran
# past 10 and was stopped while it worked. A hang still ends the run, with
# go test's dump of every goroutine.
UNIT_TAGS  = -race -tags crashhooks
UNIT_P    ?= 4
UNIT_FIRST = ./internal/proof/status ./status ./cmd/corestate ./cmd/statuslint/statuslint ./docs/migration
LISTED    = {{.ImportPath}}{{range .IgnoredGoFiles}} {{.}}{{end}}
unit:
	@echo "unit: every test of every module under -race, vetted; each module's test binaries are built first (on an empty build cache, minutes before its first result), then one line per package"
	$(GO) build -o $(CURDIR)/.bin/testsummary ./internal/cmd/testsummary
	cd status/etcdstore && $(GO) build -o $(CURDIR)/.bin/etcd-member ./internal/etcdtest/member
	ETCDTEST_MEMBER=$(CURDIR)/.bin/etcd-member \
	$(CURDIR)/.bin/testsummary -allow .ci/allowed-skips -json $(CURDIR)/.bin/unit.json $(foreach m,. $(NESTED),-dir $(m)) $(foreach p,$(UNIT_FIRST),-first $(p)) -- \
		$(GO) test -json $(UNIT_TAGS) -vet=all -p $(UNIT_P) -timeout 20m -shuffle=on -count=1 ./...
	@for m in . $(NESTED); do \
		pkgs=$$(cd $$m && { $(GO) list $(UNIT_TAGS) -f '$(LISTED)' ./...; echo --; $(GO) list -f '$(LISTED)' ./...; } | \
			awk '$$0 == "--" { other = 1; next } !other { seen[$$0] = 1; next } !seen[$$0] { print $$1 }'); \
		[ -z "$$pkgs" ] || { echo "vet of the files the test build leaves out, in $$m:" $$pkgs; (cd $$m && $(GO) vet $$pkgs) || exit 1; }; \
	done

BENCHTIME ?= 1s
bench:
	$(GO) test -tags crashhooks -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./...
	@for m in $(NESTED); do (cd $$m && $(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./...) || exit 1; done

# The peer benchmark (nested module bench/): status.Mutate next to SQLite,
# bbolt, a lockedfile-style writer and our per-call baseline, every scenario
# interleaved per round; prints the markdown report with the goals as
# pass/fail and writes it to .bin/bench-peers.md. About 10 minutes; QUICK=1
# for a one-round smoke run. strace (from deps) counts the fsyncs.
bench-peers: deps
	@mkdir -p $(CURDIR)/.bin
	cd bench && $(GO) run . $(if $(QUICK),-quick) -o $(CURDIR)/.bin/bench-peers.md

FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# The demo (cmd/demo) is built first, naming the packages as they
# compile: on a cold build cache that takes about a minute, which `go run`
# would spend without a word. DEMOFLAGS passes flags, e.g. DEMOFLAGS="--procs 8".
demo:
	@mkdir -p $(CURDIR)/.bin
	@echo "demo: building cmd/demo into .bin/ (on a cold build cache about a minute; packages are listed as they compile)"
	@$(GO) build -v -o $(CURDIR)/.bin/demo ./cmd/demo
	@echo "demo: running .bin/demo$(if $(DEMOFLAGS), $(DEMOFLAGS))"
	@$(CURDIR)/.bin/demo $(DEMOFLAGS)

# Long stress runs; not part of CI. SOAK=1 lets tests scale their loops up.
soak:
	SOAK=1 $(GO) test -race -count=20 -cpu 1,2,4 -timeout 2h ./...
	@for m in $(NESTED); do (cd $$m && SOAK=1 $(GO) test -race -count=5 -timeout 2h ./...) || exit 1; done

# The power-loss test (internal/proof/powerloss) under LazyFS, a FUSE file
# system that drops unsynced data on command. Needs root and /dev/fuse.
# .ci/powerloss builds LazyFS from LAZYFS_SRC, or uses the binary LAZYFS names.
LAZYFS_SRC ?= ../shared/tools/lazyfs
powerloss:
	LAZYFS_SRC=$(LAZYFS_SRC) GO=$(GO) bash .ci/powerloss
