package statuslint

import (
	"fmt"
	"os"
	"runtime/pprof"

	"golang.org/x/tools/go/ssa"
)

var (
	debugFn     = os.Getenv("STATUSLINT_DEBUG")
	debugProf   = os.Getenv("STATUSLINT_CPUPROFILE") // a file: the CPU profile of the analysis of one package (go vet's mode)
	debugProfOn bool
	debugRounds = os.Getenv("STATUSLINT_ROUNDS") != "" // print the facts that still change in the last rounds
)

// profile starts the CPU profile that STATUSLINT_CPUPROFILE asks for, once
// per process, and returns the function that stops it.
func profile() func() {
	if debugProf == "" || debugProfOn {
		return func() {}
	}
	f, err := os.Create(debugProf)
	if err != nil {
		return func() {}
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return func() {}
	}
	debugProfOn = true
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func init() {
	debugHook = func(s *fnState) {
		if debugFn == "" || s.fn.Name() != debugFn {
			return
		}
		fmt.Fprintln(os.Stderr, "==", s.fn, "round", s.c.round)
		for _, b := range s.fn.Blocks {
			for _, instr := range b.Instrs {
				if v, ok := instr.(ssa.Value); ok {
					fmt.Fprintf(os.Stderr, "  %s = %s   atoms=%v term=%q\n", v.Name(), instr, s.atomsOf(v), s.term(v))
				} else {
					fmt.Fprintf(os.Stderr, "  %s\n", instr)
				}
			}
		}
		for _, e := range s.events {
			fmt.Fprintf(os.Stderr, "  event %d %q %s\n", e.kind, e.key, e.instr)
		}
		fmt.Fprintln(os.Stderr, "  summary:", s.summary())
	}
}
