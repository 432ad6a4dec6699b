package statuslint

import (
	"fmt"
	"os"

	"golang.org/x/tools/go/ssa"
)

var debugFn = os.Getenv("STATUSLINT_DEBUG")

func init() {
	debugHook = func(s *fnState) {
		if debugFn == "" || s.fn.Name() != debugFn {
			return
		}
		fmt.Println("==", s.fn, "round", s.c.round)
		for _, b := range s.fn.Blocks {
			for _, instr := range b.Instrs {
				if v, ok := instr.(ssa.Value); ok {
					fmt.Printf("  %s = %s   atoms=%v term=%q\n", v.Name(), instr, s.atomsOf(v), s.term(v))
				} else {
					fmt.Printf("  %s\n", instr)
				}
			}
		}
		for _, e := range s.events {
			fmt.Printf("  event %d %q %s\n", e.kind, e.key, e.instr)
		}
		fmt.Println("  summary:", s.summary())
	}
}
