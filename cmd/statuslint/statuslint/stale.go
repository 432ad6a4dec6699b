package statuslint

import (
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A document that a program loads once (at start-up: in main, an init
// function, cobra.OnInitialize, a PersistentPreRun) into a package-level
// variable or a library's own instance, and that a handler later changes
// and saves, is a read-modify-write whose read and write share no call
// chain: two runs of the program lose one run's change. Such a write is
// found where it is made: a write of a file that the function does not
// read before it, of a document the program reads elsewhere, is a stale
// write-back when what it writes carries that document (a value decoded
// from it, kept in a package-level variable, or the library instance that
// read it), or when the document is a viper instance's, whose every write
// puts back the whole document it read.

// A readSite is where a package reads a file.
type readSite struct {
	fn    *ssa.Function
	pos   token.Pos
	instr ssa.CallInstruction
}

// programKey reports whether a key names the same file wherever in the
// program it is used: it depends on no parameter and nothing local.
func programKey(k string) bool {
	_, via := viaIndex(k)
	if inst, ok := strings.CutSuffix(k, ".configFile"); ok && strings.Contains(inst, "(") {
		return false // an instance a call made (viper.New()): one of many
	}
	return isTemplate(k) && !via && !strings.Contains(k, paramDelim)
}

// libraryDoc reports whether k is the document of a viper instance: a
// write of it writes back everything the instance read.
func libraryDoc(k string) bool {
	return k == viperGlobal || strings.HasSuffix(k, ".configFile")
}

// checkStale reports the function's stale write-backs: writes of a file
// that the function does not read (done: files already reported), read
// elsewhere in the program.
func (s *fnState) checkStale(order *order, reads, writes []event, done map[string]bool) {
	var found []finding
	var docs []event
	for _, w := range writes {
		// a viper document encoded and written to a file of the
		// program's own choosing (yaml.Marshal(viper.AllSettings()))
		for _, k := range s.libraryDocsGiven(w) {
			if k != w.key {
				d := w
				d.key, d.desc = k, ""
				docs = append(docs, d)
			}
		}
	}
	for _, w := range append(writes, docs...) {
		if done[w.key] || !programKey(w.key) || !s.concurrent(order, w) {
			continue
		}
		// a read here, before or after the write or in the same call,
		// makes it this function's own cycle, reported (or locked) as such
		readHere := false
		for _, r := range reads {
			readHere = readHere || r.key == w.key
		}
		if readHere || !libraryDoc(w.key) && !s.carries(w) {
			continue
		}
		site, ok := s.c.readSites[w.key]
		switch {
		case ok && site.fn == s.fn:
			continue // read after the write, here
		case !ok:
			fn := s.c.importedRead(w.key)
			if fn == nil {
				continue
			}
			site = readSite{pos: fn.Pos()}
		}
		done[w.key] = true
		found = append(found, finding{r: event{kind: evRead, key: w.key, instr: site.instr, pos: site.pos}, w: w})
	}
	s.reportStale(found)
}

// carries reports whether the write w's call is given the document it
// writes: a value decoded from it, or a handle on it (a library instance
// that read it).
func (s *fnState) carries(w event) bool {
	for _, a := range callArgs(w.instr.Common()) {
		for _, at := range s.atomsOf(a) {
			if (at.Kind == aDecoded || at.Kind == aHandle || at.Kind == aContent) && at.Key == w.key {
				return true
			}
		}
	}
	return false
}

// libraryDocsGiven returns the viper documents that the write w's call is
// given, decoded, other than in its receiver (a handle's Close is given
// only the handle).
func (s *fnState) libraryDocsGiven(w event) []string {
	var out []string
	args := callArgs(w.instr.Common())
	if isMethodCall(w.instr.Common()) && len(args) > 0 {
		args = args[1:]
	}
	for _, a := range args {
		for _, at := range s.atomsOf(a) {
			if at.Kind == aDecoded && libraryDoc(at.Key) && !slices.Contains(out, at.Key) {
				out = append(out, at.Key)
			}
		}
	}
	return out
}

// importedRead returns a function of another package whose fact says it
// reads file k, if any.
func (c *checker) importedRead(k string) *types.Func {
	if c.importedReads == nil {
		c.importedReads = make(map[string]*types.Func)
		for _, of := range c.pass.AllObjectFacts() {
			fn, ok := of.Object.(*types.Func)
			f, isFn := of.Fact.(*fnFact)
			if !ok || !isFn || fn.Pkg() == c.pass.Pkg {
				continue
			}
			for _, r := range f.Reads {
				if programKey(r) && c.importedReads[r] == nil {
					c.importedReads[r] = fn
				}
			}
		}
	}
	return c.importedReads[k]
}

// reportStale reports stale write-backs, like reportRMW, naming where the
// document was read.
func (s *fnState) reportStale(found []finding) {
	if len(found) == 0 {
		return
	}
	several := len(found) > 1
	for _, f := range found {
		where := s.c.pass.Fset.Position(f.r.pos)
		read := filepath.Base(where.Filename) + ":" + strconv.Itoa(where.Line)
		if f.r.instr != nil {
			read += s.c.callNameAt(f.r.pos, f.r.instr)
		}
		s.c.reportf(s.c.eventPos(f.w), "read-modify-write of %s without a lock: read at %s and kept, "+
			"written back here%s; an update made in between by another goroutine or process "+
			"is lost (use %s)", s.fileName(f.w.key, f.w.desc), read,
			s.c.callNameAt(s.c.eventPos(f.w), f.w.instr), s.format(f).fix(several))
	}
}
