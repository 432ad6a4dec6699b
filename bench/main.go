//go:build unix

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

type config struct {
	rounds int
	window time.Duration
	trace  time.Duration   // window of the fsync-counting pass; 0: none
	only   map[string]bool // scenarios to run; nil: all
	sys    map[string]bool // systems to run besides mutate; nil: all
	dir    string
	smoke  bool // tiny sizes for the test: at most 4 processes, goroutines and records
	log    io.Writer
}

func main() {
	if a, ok := os.LookupEnv(childEnv); ok {
		runChild(a)
	}
	cfg := config{log: os.Stderr}
	quick := flag.Bool("quick", os.Getenv("QUICK") != "", "one short round (a smoke run; figures are not meaningful)")
	flag.IntVar(&cfg.rounds, "rounds", 5, "rounds (each runs every system in every scenario)")
	flag.DurationVar(&cfg.window, "window", 1500*time.Millisecond, "how long each system runs per scenario and round")
	flag.DurationVar(&cfg.trace, "trace", 500*time.Millisecond, "window of the strace pass counting fsyncs (0: skip)")
	only := flag.String("only", "", "comma-separated scenarios to run (default all)")
	sys := flag.String("systems", "", "comma-separated systems to run besides mutate (default all)")
	flag.StringVar(&cfg.dir, "dir", "", "directory for the records (default: the temp dir); its file system is what is measured")
	outPath := flag.String("o", "", "also write the report to this file")
	flag.Parse()
	if *quick {
		cfg.rounds, cfg.window, cfg.trace = 1, 300*time.Millisecond, 200*time.Millisecond
	}
	cfg.only, cfg.sys = nameSet(*only), nameSet(*sys)
	if cfg.sys != nil {
		cfg.sys["mutate"] = true
	}
	if cfg.trace > 0 {
		if _, err := exec.LookPath("strace"); err != nil {
			fmt.Fprintln(os.Stderr, "peerbench: strace not found: fsyncs per op will not be counted")
			cfg.trace = 0
		}
	}
	rep, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(1)
	}
	md := rep.markdown(cfg, strings.Join(os.Args[1:], " "))
	fmt.Print(md)
	if *outPath != "" {
		if err := os.WriteFile(*outPath, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "peerbench:", err)
			os.Exit(1)
		}
	}
}

// report holds every cell: results[scenario][system][round].
type report struct {
	start   time.Time
	elapsed time.Duration
	scens   []scenario
	results map[string]map[string][]cellResult
	syncs   map[string]map[string]cellResult // the trace pass
}

func run(cfg config) (*report, error) {
	rep := &report{start: time.Now(), results: map[string]map[string][]cellResult{}, syncs: map[string]map[string]cellResult{}}
	for _, sc := range scenarios {
		if cfg.only != nil && !cfg.only[sc.name] {
			continue
		}
		if cfg.smoke {
			sc.procs, sc.goroutines, sc.recs = min(sc.procs, 4), min(sc.goroutines, 4), min(sc.recs, 4)
		}
		sc.pick = cfg.sys
		rep.scens = append(rep.scens, sc)
		rep.results[sc.name] = map[string][]cellResult{}
		rep.syncs[sc.name] = map[string]cellResult{}
	}
	for r := range cfg.rounds {
		for _, sc := range rep.scens {
			sys := sc.systems()
			for k := range sys {
				s := sys[(k+r)%len(sys)]
				res, err := runCell(cfg.dir, sc, s, cfg.window, false)
				if err != nil {
					return nil, fmt.Errorf("round %d, scenario %s, %s: %w", r+1, sc.name, s.name, err)
				}
				fmt.Fprintf(cfg.log, "round %d %-3s %-12s %9.0f ops/s  p50 %-9v p99 %-9v max %-9v fair %.2f cpu/op %-8v err %d\n",
					r+1, sc.name, s.name, res.opsPerSec, res.p50.Round(time.Microsecond), res.p99.Round(time.Microsecond),
					res.max.Round(time.Microsecond), res.fairness, res.cpuPerOp.Round(time.Microsecond), res.errors)
				rep.results[sc.name][s.name] = append(rep.results[sc.name][s.name], res)
			}
		}
	}
	if cfg.trace > 0 {
		for _, sc := range rep.scens {
			for _, s := range sc.systems() {
				res, err := runCell(cfg.dir, sc, s, cfg.trace, true)
				if err != nil {
					return nil, fmt.Errorf("fsync pass, scenario %s, %s: %w", sc.name, s.name, err)
				}
				fmt.Fprintf(cfg.log, "strace %-3s %-12s %.3f fsyncs/op\n", sc.name, s.name, res.fsyncs)
				rep.syncs[sc.name][s.name] = res
			}
		}
	}
	rep.elapsed = time.Since(rep.start)
	return rep, nil
}

// nameSet is the set of a comma-separated list; nil for "".
func nameSet(list string) map[string]bool {
	if list == "" {
		return nil
	}
	set := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		set[s] = true
	}
	return set
}

func (sc scenario) systems() []system {
	var out []system
	for _, s := range systems {
		if sc.runs(s) {
			out = append(out, s)
		}
	}
	return out
}
