package statuslint

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// An order answers, for one function, whether one instruction can run
// after another, and which file locks are held at an instruction.
//
// Locks are tracked as a must-analysis over the control-flow graph: a lock
// is held at an instruction if every path to it takes it (a lock
// operation whose How releases, releases every lock). Each acquisition is
// its own lock, so that a read under one and a write under a later one are
// not taken for one critical section. A deferred release runs after the
// body: it releases nothing in it.
type order struct {
	s       *fnState
	index   map[ssa.Instruction]int
	reach   map[*ssa.BasicBlock][]bool
	ops     map[ssa.Instruction][]lockOp
	acquire map[ssa.Instruction]int // acquisitions' ids
	held    map[ssa.Instruction]uint64
	before  map[ssa.Instruction]uint64 // held just before, on every path
	mayHeld map[ssa.Instruction]uint64 // held just before, on some path
	exit    uint64                     // held when the function returns, on every path
	mayExit uint64                     // held when it returns, on some path
}

func newOrder(s *fnState) *order {
	o := &order{
		s:       s,
		index:   make(map[ssa.Instruction]int),
		reach:   make(map[*ssa.BasicBlock][]bool),
		ops:     make(map[ssa.Instruction][]lockOp),
		acquire: make(map[ssa.Instruction]int),
		held:    make(map[ssa.Instruction]uint64),
		before:  make(map[ssa.Instruction]uint64),
		mayHeld: make(map[ssa.Instruction]uint64),
	}
	for _, b := range s.fn.Blocks {
		for i, instr := range b.Instrs {
			o.index[instr] = i
		}
	}
	for _, e := range s.events {
		if e.kind != evLock || e.lock.How.FromParam {
			continue
		}
		if _, deferred := e.instr.(*ssa.Defer); deferred {
			continue
		}
		o.ops[e.instr] = append(o.ops[e.instr], e.lock)
		if !o.releases(e.lock) {
			if _, ok := o.acquire[e.instr]; !ok && len(o.acquire) < 64 {
				o.acquire[e.instr] = len(o.acquire)
			}
		}
	}
	if len(o.ops) > 0 {
		o.mayExit = o.solveLocks(false)
		for instr, h := range o.before {
			o.mayHeld[instr] = h
		}
		o.exit = o.solveLocks(true)
	}
	return o
}

func (o *order) releases(op lockOp) bool { return op.How.Known && op.How.Val == op.Unlock }

// solveLocks computes the locks held after each instruction, on every
// path (must) or on some path, and returns those held at the function's
// returns.
func (o *order) solveLocks(must bool) uint64 {
	blocks := o.s.fn.Blocks
	in := make([]uint64, len(blocks))
	out := make([]uint64, len(blocks))
	top := uint64(0)
	if must {
		top = ^uint64(0)
	}
	for i := range out {
		out[i] = top
	}
	for changed, rounds := true, 0; changed && rounds < 4*len(blocks)+8; rounds++ {
		changed = false
		for _, b := range blocks {
			state := top
			if len(b.Preds) == 0 {
				state = 0
			}
			for _, p := range b.Preds {
				if must {
					state &= out[p.Index]
				} else {
					state |= out[p.Index]
				}
			}
			in[b.Index] = state
			for _, instr := range b.Instrs {
				o.before[instr] = state
				for _, op := range o.ops[instr] {
					if o.releases(op) {
						state = 0
					} else if id, ok := o.acquire[instr]; ok {
						state |= 1 << id
					}
				}
				o.held[instr] = state
			}
			if state != out[b.Index] {
				out[b.Index] = state
				changed = true
			}
		}
	}
	exit, set := top, false
	for _, b := range blocks {
		if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			if must {
				exit &= out[b.Index]
			} else {
				exit |= out[b.Index]
			}
			set = true
		}
	}
	if !set {
		return 0
	}
	return exit
}

// heldAt returns the locks held when instr has run (for a deferred call,
// when the function returns).
func (o *order) heldAt(instr ssa.Instruction) uint64 {
	if _, ok := instr.(*ssa.Defer); ok {
		return o.exit
	}
	return o.held[instr]
}

// protected reports whether a lock taken before a read is still held,
// never released in between, at a write.
func (o *order) protected(r, w ssa.Instruction) bool {
	return o.heldAt(r)&o.heldAt(w) != 0
}

// dominates reports whether every path to b passes a first.
func (o *order) dominates(a, b ssa.Instruction) bool {
	ab, bb := a.Block(), b.Block()
	if ab.Parent() != bb.Parent() {
		return false // one in a function literal: no order between them
	}
	if ab == bb {
		return o.index[a] < o.index[b]
	}
	return ab.Dominates(bb)
}

// reaches reports whether b can run after a.
func (o *order) reaches(a, b ssa.Instruction) bool {
	if _, ok := b.(*ssa.Defer); ok {
		return true // runs when the function returns
	}
	ab, bb := a.Block(), b.Block()
	if ab == bb && o.index[a] < o.index[b] {
		return true
	}
	r, ok := o.reach[ab]
	if !ok {
		r = make([]bool, len(o.s.fn.Blocks))
		stack := append([]*ssa.BasicBlock(nil), ab.Succs...)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if r[x.Index] {
				continue
			}
			r[x.Index] = true
			stack = append(stack, x.Succs...)
		}
		o.reach[ab] = r
	}
	return r[bb.Index]
}

// netLocks is what the function's lock operations leave to its callers: a
// lock it takes and still holds when it returns, a release of a lock it
// did not take, and operations whose How its caller gives.
func (s *fnState) netLocks() []lockOp {
	var out []lockOp
	var o *order
	deferredRelease := false
	for _, e := range s.events {
		if _, ok := e.instr.(*ssa.Defer); ok && e.kind == evLock && e.lock.How.Known && e.lock.How.Val == e.lock.Unlock {
			deferredRelease = true
		}
	}
	for _, e := range s.events {
		if _, ok := e.instr.(*ssa.Defer); ok {
			continue // runs when the function returns
		}
		if e.kind != evLock {
			continue
		}
		if e.lock.How.FromParam {
			out = append(out, e.lock)
			continue
		}
		if o == nil {
			o = newOrder(s)
		}
		if o.releases(e.lock) {
			// releasing a lock that no path here took: the caller's
			if o.mayHeld[e.instr] == 0 {
				out = append(out, e.lock)
			}
			continue
		}
		// a lock held when the function returns on some path (TryLock on
		// success), and not released by a deferred call, is taken for its
		// callers
		if id, ok := o.acquire[e.instr]; ok && o.mayExit&(1<<id) != 0 && !deferredRelease {
			out = append(out, e.lock)
		}
	}
	return out
}

// successBlock returns the block a call's success leads to: the branch of
// the first test of its error result against nil where the error is nil.
// It returns nil if the call has no error result or it is not tested so.
func (o *order) successBlock(instr ssa.CallInstruction) *ssa.BasicBlock {
	call, ok := instr.(*ssa.Call)
	if !ok {
		return nil
	}
	var errVal ssa.Value
	if isError(call.Type()) {
		errVal = call // a call whose only result is its error (viper's ReadInConfig)
	} else if tuple, ok := call.Type().(*types.Tuple); ok && tuple.Len() > 0 && isError(tuple.At(tuple.Len()-1).Type()) &&
		call.Referrers() != nil {
		for _, r := range *call.Referrers() {
			if ex, ok := r.(*ssa.Extract); ok && ex.Index == tuple.Len()-1 {
				errVal = ex
			}
		}
	}
	if errVal == nil || errVal.Referrers() == nil {
		return nil
	}
	for _, r := range *errVal.Referrers() {
		// if _, ok := err.(T); ok { ... } and if errors.Is(err, X) { ... }:
		// the true branch is a failure, the other one holds the success
		if other := failureTest(r); other != nil {
			return other
		}
		if b := nilBranch(r, true); b != nil {
			return b
		}
	}
	return nil
}

// nilBranch returns, for a use of a value that compares it with nil and
// branches on the result, the block where the value is nil (isNil) or
// where it is not.
func nilBranch(use ssa.Instruction, isNil bool) *ssa.BasicBlock {
	cmp, ok := use.(*ssa.BinOp)
	if !ok || (cmp.Op != token.EQL && cmp.Op != token.NEQ) || !isNilConst(cmp.X) && !isNilConst(cmp.Y) || cmp.Referrers() == nil {
		return nil
	}
	for _, u := range *cmp.Referrers() {
		if br, ok := u.(*ssa.If); ok && len(br.Block().Succs) == 2 {
			if (cmp.Op == token.EQL) == isNil {
				return br.Block().Succs[0]
			}
			return br.Block().Succs[1]
		}
	}
	return nil
}

// presentBlock returns the block where a call's first result, a pointer,
// is not nil: the branch of the first test of it against nil. A loader
// that returns nil for a missing or expired document tells a miss so. It
// returns nil if the result is not tested so.
func (o *order) presentBlock(instr ssa.CallInstruction) *ssa.BasicBlock {
	call, ok := instr.(*ssa.Call)
	if !ok || call.Referrers() == nil {
		return nil
	}
	var v ssa.Value = call
	if tuple, ok := call.Type().(*types.Tuple); ok {
		v = nil
		for _, r := range *call.Referrers() {
			if ex, ok := r.(*ssa.Extract); ok && ex.Index == 0 && tuple.Len() > 0 {
				v = ex
			}
		}
	}
	if v == nil || v.Referrers() == nil {
		return nil
	}
	if _, ok := v.Type().Underlying().(*types.Pointer); !ok {
		return nil
	}
	for _, r := range *v.Referrers() {
		if b := nilBranch(r, false); b != nil {
			return b
		}
	}
	return nil
}

// foundBlock returns the block where a call's boolean result is true: the
// branch of the first test of it. A lookup that returns (value, found)
// or (value, ok, error) tells a miss so. It returns nil if the call has
// no boolean result tested so.
func (o *order) foundBlock(instr ssa.CallInstruction) *ssa.BasicBlock {
	call, ok := instr.(*ssa.Call)
	if !ok || call.Referrers() == nil {
		return nil
	}
	if _, ok := call.Type().(*types.Tuple); !ok {
		return nil
	}
	for _, r := range *call.Referrers() {
		ex, ok := r.(*ssa.Extract)
		if !ok || ex.Referrers() == nil {
			continue
		}
		if b, ok := ex.Type().Underlying().(*types.Basic); !ok || b.Kind() != types.Bool {
			continue
		}
		for _, u := range *ex.Referrers() {
			if br, ok := u.(*ssa.If); ok && len(br.Block().Succs) == 2 {
				return br.Block().Succs[0]
			}
		}
	}
	return nil
}

// failureTest returns, for a use of an error value that tests for one
// kind of failure (a type assertion with ok, errors.Is or errors.As) and
// branches on it, the block of the other branch.
func failureTest(use ssa.Instruction) *ssa.BasicBlock {
	var cond ssa.Value
	switch u := use.(type) {
	case *ssa.TypeAssert:
		if !u.CommaOk || u.Referrers() == nil {
			return nil
		}
		for _, r := range *u.Referrers() {
			if ex, ok := r.(*ssa.Extract); ok && ex.Index == 1 {
				cond = ex
			}
		}
	case *ssa.Call:
		if obj := staticObject(u.Common()); obj != nil && pkgPath(obj) == "errors" && (obj.Name() == "Is" || obj.Name() == "As") {
			cond = u
		}
	case *ssa.MakeInterface:
		// errors.Is(err, …) takes err as it is; a conversion comes first
		// only for a concrete error type
		return nil
	}
	if cond == nil || cond.Referrers() == nil {
		return nil
	}
	for _, r := range *cond.Referrers() {
		if br, ok := r.(*ssa.If); ok && len(br.Block().Succs) == 2 {
			return br.Block().Succs[1]
		}
	}
	return nil
}

func isNilConst(v ssa.Value) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.IsNil()
}

// reachesBlock reports whether b runs, or can run, once a has started.
func (o *order) reachesBlock(a, b *ssa.BasicBlock) bool {
	if a == b {
		return true
	}
	seen := make([]bool, len(o.s.fn.Blocks))
	stack := []*ssa.BasicBlock{a}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range x.Succs {
			if y == b {
				return true
			}
			if !seen[y.Index] {
				seen[y.Index] = true
				stack = append(stack, y)
			}
		}
	}
	return false
}
