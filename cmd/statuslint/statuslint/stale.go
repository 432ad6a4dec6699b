package statuslint

import (
	"fmt"
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
	rank  int // which read a finding names (see fnState.readRank)
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
		// makes it this function's own cycle, reported (or locked) as such;
		// not the refresh a callee makes after its own write (see reread),
		// which a read-modify-write above pairs with a later write
		readHere := false
		for _, r := range reads {
			readHere = readHere || r.key == w.key && !r.after
		}
		if readHere || !libraryDoc(w.key) && !s.carries(w) {
			continue
		}
		site, ok := s.c.readSites[w.key]
		imported, rank := s.c.importedRead(w.key)
		where := ""
		switch {
		case ok && site.fn == s.fn:
			continue // read after the write, here
		case !ok || imported != "" && rank < site.rank:
			// the loader's read, where the package's own is a helper's
			if where = imported; where == "" {
				continue
			}
		}
		done[w.key] = true
		if w.alt && slices.ContainsFunc(found, func(f finding) bool { return f.w.instr == w.instr }) {
			continue // another key the same path may have (see phiTerm)
		}
		found = append(found, finding{r: event{kind: evRead, key: w.key, instr: site.instr, pos: site.pos, desc: where}, w: w})
	}
	s.reportStale(found)
}

// carries reports whether the write w's call is given the document it
// writes: a value decoded from it, or a handle on it (a library instance
// that read it).
func (s *fnState) carries(w event) bool {
	for _, a := range callArgs(w.instr.Common()) {
		if a == nil || valueOnly(a.Type()) {
			continue // a value taken out of a document (a name) is not the document
		}
		for _, at := range s.atomsOf(a) {
			if (at.Kind == aDecoded || at.Kind == aHandle || at.Kind == aContent) && at.Key == w.key {
				return true
			}
		}
	}
	return false
}

// valueOnly reports whether t is a scalar other than a string, or a
// []string (a command's arguments): values, not a document. (Bytes and a
// string may be the encoded document; a key taken out of it names what
// the write changes.)
func valueOnly(t types.Type) bool {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&types.IsString == 0
	case *types.Slice:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return ok && b.Info()&types.IsString != 0
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

// A readsFact is a package's fact: the files, named the same in the whole
// program (see programKey), that its functions read, and where (a
// function's fact reaches other packages only for exported functions and
// methods; a configuration is most often read by an unexported one).
type readsFact struct {
	Keys  []string
	Sites []string // Sites[i]: where Keys[i] is read, "file.go:line (call)"
	Ranks []int    // Ranks[i]: which of the program's reads of Keys[i] a finding names (see fnState.readRank)
}

func (*readsFact) AFact() {}

func (f *readsFact) String() string { return fmt.Sprintf("reads %d files", len(f.Keys)) }

// exportReads records the package's readsFact.
func (c *checker) exportReads() {
	f := &readsFact{}
	for k := range c.readSites {
		f.Keys = append(f.Keys, k)
	}
	if len(f.Keys) == 0 {
		return
	}
	slices.Sort(f.Keys)
	for _, k := range f.Keys {
		site := c.readSites[k]
		f.Sites = append(f.Sites, c.siteName(site.pos, site.instr))
		f.Ranks = append(f.Ranks, site.rank)
	}
	c.pass.ExportPackageFact(f)
}

// importedRead returns where a package this one imports reads file k
// ("file.go:line (call)"), or "", and that read's rank (see
// fnState.readRank).
func (c *checker) importedRead(k string) (string, int) {
	if c.importedReads == nil {
		c.importedReads = make(map[string]importedSite)
		for _, pf := range c.pass.AllPackageFacts() {
			f, ok := pf.Fact.(*readsFact)
			if !ok || pf.Package == c.pass.Pkg {
				continue
			}
			for i, key := range f.Keys {
				if i >= len(f.Sites) {
					continue
				}
				rank := 3
				if i < len(f.Ranks) {
					rank = f.Ranks[i]
				}
				if old, seen := c.importedReads[key]; !seen || rank < old.rank || rank == old.rank && f.Sites[i] < old.where {
					c.importedReads[key] = importedSite{where: f.Sites[i], rank: rank}
				}
			}
		}
	}
	site := c.importedReads[k]
	return site.where, site.rank
}

// An importedSite is where an imported package reads a file, and that
// read's rank.
type importedSite struct {
	where string // "file.go:line (call)"
	rank  int
}

// reportStale reports stale write-backs, like reportRMW, naming where each
// document was read: one finding per write call, naming every file it
// writes back.
func (s *fnState) reportStale(found []finding) {
	done := make(map[token.Pos]bool)
	for i, f := range found {
		pos := s.c.eventPos(f.w)
		if done[pos] {
			continue
		}
		done[pos] = true
		var files, reads []string
		format := docFormat("")
		for _, g := range found[i:] {
			if s.c.eventPos(g.w) != pos {
				continue
			}
			files = appendNew(files, s.fileName(g.w.key, g.w.desc))
			reads = appendNew(reads, s.staleRead(g.r))
			format = format.join(s.format(g))
		}
		s.c.reportf(pos, "read-modify-write of %s without a lock: read at %s and kept, "+
			"written back here%s; an update made in between by another goroutine or process "+
			"is lost (use %s)", listed(files), listed(reads),
			s.c.callNameAt(pos, f.w.instr), format.fix(len(found) > 1))
	}
}

// staleRead says where a document written back stale was read.
func (s *fnState) staleRead(r event) string {
	if r.desc != "" {
		return r.desc // in a package this one imports
	}
	return s.c.siteName(r.pos, r.instr)
}

// siteName names a read for a message: "file.go:line (call)".
func (c *checker) siteName(pos token.Pos, instr ssa.CallInstruction) string {
	where := c.pass.Fset.Position(pos)
	return filepath.Base(where.Filename) + ":" + strconv.Itoa(where.Line) + c.callNameAt(pos, instr)
}

func appendNew(list []string, x string) []string {
	if slices.Contains(list, x) {
		return list
	}
	return append(list, x)
}

// listed joins names for a message, the first three of them: a call
// through an interface with many implementations may write back dozens.
func listed(names []string) string {
	const most = 3
	if len(names) <= most {
		return strings.Join(names, " and ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}
