package statuslint

import "go/token"

// checkReadModifyWrite reports rule 1: a decoded read of a path followed
// by a write of the same path.
func (u *unit) checkReadModifyWrite() {
	reported := make(map[token.Pos]bool)
	for _, w := range u.writes {
		for _, r := range u.reads {
			if r.key == w.key && r.pos < w.end && !reported[w.pos] {
				reported[w.pos] = true
				u.fn.report(w.pos, "read-modify-write of %s without a lock: read and decoded at line %d, "+
					"written back here; an update made in between by another goroutine or process "+
					"is lost (use status.Mutate)",
					w.desc, u.pass.Fset.Position(r.pos).Line)
			}
		}
	}
}
