//go:build unix

package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// A goal compares Mutate with another system in one scenario (ratio of
// ops/s within each round, median over rounds), or bounds one of Mutate's
// own figures.
type goal struct {
	scen, desc string
	value      func(rep *report) (float64, bool)
	ok         func(v float64) bool
	format     string
}

func ratioGoal(scen, peer string, min float64) goal {
	return goal{
		scen: scen, desc: fmt.Sprintf("Mutate ≥ %.2f× %s", min, peer),
		value:  func(rep *report) (float64, bool) { return rep.ratio(scen, peer) },
		ok:     func(v float64) bool { return v >= min },
		format: "%.2f×",
	}
}

func goals(rep *report) []goal {
	var gs []goal
	for _, sc := range rep.scens {
		switch sc.name {
		case "a":
			gs = append(gs, ratioGoal("a", "floor", 0.95))
		case "b":
			gs = append(gs, ratioGoal("b", "bbolt-batch", 3))
		case "c", "e":
			gs = append(gs, ratioGoal(sc.name, "bbolt-batch", 1))
		case "d":
			gs = append(gs, ratioGoal("d", "sqlite-full", 4),
				goal{scen: "d", desc: "slowest/fastest process ≥ 0.85 (Mutate)", format: "%.2f",
					value: func(rep *report) (float64, bool) {
						return rep.median("d", "mutate", func(c cellResult) float64 { return c.fairness })
					},
					ok: func(v float64) bool { return v >= 0.85 }},
				goal{scen: "d", desc: "p99 ≤ 100 ms (Mutate)", format: "%.1f ms",
					value: func(rep *report) (float64, bool) {
						return rep.median("d", "mutate", func(c cellResult) float64 { return ms(c.p99) })
					},
					ok: func(v float64) bool { return v <= 100 }})
		case "d32":
			gs = append(gs, goal{scen: "d32", desc: "no call > 1 s (Mutate, worst round)", format: "%.0f ms",
				value: func(rep *report) (float64, bool) {
					cs := rep.results["d32"]["mutate"]
					if len(cs) == 0 {
						return 0, false
					}
					m := 0.0
					for _, c := range cs {
						m = max(m, ms(c.max))
					}
					return m, true
				},
				ok: func(v float64) bool { return v <= 1000 }})
		case "d32x1":
			gs = append(gs, goal{scen: "d32x1", desc: "slowest/fastest process ≥ 0.85 (Mutate)", format: "%.2f",
				value: func(rep *report) (float64, bool) {
					return rep.median("d32x1", "mutate", func(c cellResult) float64 { return c.fairness })
				},
				ok: func(v float64) bool { return v >= 0.85 }})
		case "f":
			for _, s := range sc.systems() {
				if s.peer {
					gs = append(gs, ratioGoal("f", s.name, 5))
				}
			}
		}
		gs = append(gs, ratioGoal(sc.name, "baseline", 1))
	}
	return gs
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is the median over rounds of Mutate's ops/s divided by sys's.
func (rep *report) ratio(scen, sys string) (float64, bool) {
	m, s := rep.results[scen]["mutate"], rep.results[scen][sys]
	if len(m) == 0 || len(m) != len(s) {
		return 0, false
	}
	var rs []float64
	for i := range m {
		if s[i].opsPerSec > 0 {
			rs = append(rs, m[i].opsPerSec/s[i].opsPerSec)
		}
	}
	return median(rs), len(rs) > 0
}

func (rep *report) ratios(scen, sys string) []float64 {
	m, s := rep.results[scen]["mutate"], rep.results[scen][sys]
	var rs []float64
	for i := range min(len(m), len(s)) {
		if s[i].opsPerSec > 0 {
			rs = append(rs, m[i].opsPerSec/s[i].opsPerSec)
		}
	}
	return rs
}

func (rep *report) median(scen, sys string, f func(cellResult) float64) (float64, bool) {
	cs := rep.results[scen][sys]
	if len(cs) == 0 {
		return 0, false
	}
	var v []float64
	for _, c := range cs {
		v = append(v, f(c))
	}
	return median(v), true
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (rep *report) markdown(cfg config, args string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Peer benchmark, %s, %d round(s) × %v per cell, %s/%s, %d CPUs; took %v.\n\n",
		rep.start.Format("2006-01-02 15:04 MST"), cfg.rounds, cfg.window, runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), rep.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "Command: `make bench-peers` (`cd bench && go run . %s`).\n\n", args)
	b.WriteString("Operation: read a ~300 B JSON record, add 1 to `runs`, store it durably. Every cell checked after its run: stored counts == acknowledged calls (no update lost). ")
	b.WriteString("ops/s counts calls completed inside the window; p50/p99/max are per-call latencies; ")
	b.WriteString("`÷` is Mutate's ops/s divided by the system's, per round, median [min–max]; fsyncs/op counts fsync, fdatasync, syncfs, sync_file_range and msync calls per acknowledged call in a separate pass under `strace -f -c` (which slows system calls, so batch sizes there differ somewhat).\n\n")

	b.WriteString("| goal | scenario | measured | result |\n|---|---|---|---|\n")
	for _, g := range goals(rep) {
		v, ok := g.value(rep)
		res := "n/a"
		if ok {
			res = "**FAIL**"
			if g.ok(v) {
				res = "pass"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | "+g.format+" | %s |\n", g.desc, g.scen, v, res)
	}
	b.WriteString("\n")
	for _, sc := range rep.scens {
		fmt.Fprintf(&b, "**%s** — %s\n\n", sc.name, sc.desc)
		b.WriteString("| system | ops/s | p50 | p99 | max | CPU/op | fsyncs/op | Mutate ÷ system |")
		if sc.procs > 1 {
			b.WriteString(" slowest/fastest process |")
		}
		if sc.readers > 0 {
			b.WriteString(" reads/s |")
		}
		b.WriteString("\n|---|---|---|---|---|---|---|---|")
		if sc.procs > 1 {
			b.WriteString("---|")
		}
		if sc.readers > 0 {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, s := range sc.systems() {
			cs := rep.results[sc.name][s.name]
			ops, _ := rep.median(sc.name, s.name, func(c cellResult) float64 { return c.opsPerSec })
			p50, _ := rep.median(sc.name, s.name, func(c cellResult) float64 { return ms(c.p50) })
			p99, _ := rep.median(sc.name, s.name, func(c cellResult) float64 { return ms(c.p99) })
			mx := 0.0
			errs := 0
			for _, c := range cs {
				mx = max(mx, ms(c.max))
				errs += c.errors
			}
			syncs := "–"
			if t, ok := rep.syncs[sc.name][s.name]; ok {
				syncs = fmt.Sprintf("%.3f", t.fsyncs)
			}
			ratio := "—"
			if s.name != "mutate" {
				rs := rep.ratios(sc.name, s.name)
				if len(rs) > 0 {
					ratio = fmt.Sprintf("%.2f [%.2f–%.2f]", median(rs), slices.Min(rs), slices.Max(rs))
				}
			}
			name := s.name
			if s.name == "replace-nosync" {
				name += " (not durable)"
			}
			if errs > 0 {
				name += fmt.Sprintf(" (%d errors)", errs)
			}
			cpu, _ := rep.median(sc.name, s.name, func(c cellResult) float64 { return float64(c.cpuPerOp.Microseconds()) })
			fmt.Fprintf(&b, "| %s | %.0f | %.2f ms | %.1f ms | %.0f ms | %.0f µs | %s | %s |", name, ops, p50, p99, mx, cpu, syncs, ratio)
			if sc.procs > 1 {
				f, _ := rep.median(sc.name, s.name, func(c cellResult) float64 { return c.fairness })
				fmt.Fprintf(&b, " %.2f |", f)
			}
			if sc.readers > 0 {
				r, _ := rep.median(sc.name, s.name, func(c cellResult) float64 { return float64(c.reads) / cfg.window.Seconds() })
				fmt.Fprintf(&b, " %.0f |", r)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
