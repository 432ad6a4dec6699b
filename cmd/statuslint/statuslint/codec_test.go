package statuslint

import (
	"bytes"
	"encoding/gob"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

func genIntArg() *rapid.Generator[intArg] {
	return rapid.Custom(func(t *rapid.T) intArg {
		return intArg{Known: rapid.Bool().Draw(t, "known"), Val: rapid.Int64().Draw(t, "val"),
			FromParam: rapid.Bool().Draw(t, "fromParam"), Param: rapid.IntRange(0, 40).Draw(t, "param")}
	})
}

func genAtoms() *rapid.Generator[atoms] {
	return rapid.Custom(func(t *rapid.T) atoms {
		return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) atom {
			return atom{Kind: atomKind(rapid.IntRange(1, 6).Draw(t, "kind")), Key: rapid.String().Draw(t, "key"),
				Param: rapid.IntRange(0, 40).Draw(t, "param"), Flag: genIntArg().Draw(t, "flag"),
				NoHandle: rapid.Bool().Draw(t, "noHandle")}
		}), 0, 4).Draw(t, "atoms")
	})
}

func genFnFact() *rapid.Generator[*fnFact] {
	strs := rapid.SliceOfN(rapid.String(), 0, 3)
	ints := rapid.SliceOfN(rapid.IntRange(0, 40), 0, 3)
	truncs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) trunc {
		return trunc{Key: rapid.String().Draw(t, "key"), What: rapid.String().Draw(t, "what"), Flag: genIntArg().Draw(t, "flag")}
	}), 0, 2)
	return rapid.Custom(func(t *rapid.T) *fnFact {
		return &fnFact{
			Recv:    rapid.Bool().Draw(t, "recv"),
			Paths:   strs.Draw(t, "paths"),
			Results: rapid.SliceOfN(genAtoms(), 0, 3).Draw(t, "results"),
			Stores: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) paramSet {
				return paramSet{Param: rapid.IntRange(0, 40).Draw(t, "param"), Atoms: genAtoms().Draw(t, "atoms")}
			}), 0, 2).Draw(t, "stores"),
			Reads: strs.Draw(t, "reads"), Writes: strs.Draw(t, "writes"), MayWrites: strs.Draw(t, "mayWrites"),
			Truncs: truncs.Draw(t, "truncs"), InPlace: truncs.Draw(t, "inPlace"),
			Locks: rapid.SliceOfN(rapid.Custom(func(t *rapid.T) lockOp {
				return lockOp{How: genIntArg().Draw(t, "how"), Unlock: rapid.Int64().Draw(t, "unlock")}
			}), 0, 2).Draw(t, "locks"),
			Fills: ints.Draw(t, "fills"), Moves: ints.Draw(t, "moves"), Cycles: strs.Draw(t, "cycles"),
			Rereads: strs.Draw(t, "rereads"),
		}
	})
}

// roundTrip encodes v with gob, as go vet's facts files do, and decodes it
// into out.
func roundTrip(t *rapid.T, v, out any) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := gob.NewDecoder(&buf).Decode(out); err != nil {
		t.Fatal(err)
	}
}

var factOpts = []cmp.Option{cmp.AllowUnexported(typeFact{}), cmpopts.EquateEmpty(),
	cmpopts.IgnoreFields(typeFact{}, "raw")}

// TestFactCodec checks that every fact reads back as it was written, and
// that a type's methods read back after the fact was written again
// unread (go vet re-exports the facts of every dependency).
func TestFactCodec(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genFnFact().Draw(t, "fn")
		var g fnFact
		roundTrip(t, f, &g)
		if d := cmp.Diff(f, &g, factOpts...); d != "" {
			t.Fatalf("fnFact changed in a round trip (-want +got):\n%s", d)
		}

		v := &varFact{Atoms: genAtoms().Draw(t, "atoms"), Key: rapid.String().Draw(t, "key")}
		if rapid.Bool().Draw(t, "call") {
			v.Call = genFnFact().Draw(t, "call")
		}
		var w varFact
		roundTrip(t, v, &w)
		if d := cmp.Diff(v, &w, factOpts...); d != "" {
			t.Fatalf("varFact changed in a round trip (-want +got):\n%s", d)
		}

		names := rapid.SliceOfNDistinct(rapid.StringMatching(`[A-Za-z]\w*`), 1, 4, rapid.ID[string]).Draw(t, "names")
		tf := &typeFact{Names: names}
		for range names {
			tf.Facts = append(tf.Facts, genFnFact().Draw(t, "method"))
		}
		var once, twice typeFact
		roundTrip(t, tf, &once)
		roundTrip(t, &once, &twice) // re-exported without being read
		for _, got := range []*typeFact{&once, &twice} {
			if err := got.load(); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tf, got, factOpts...); d != "" {
				t.Fatalf("typeFact changed in a round trip (-want +got):\n%s", d)
			}
		}
	})
}

// TestFactCodecCorrupt checks that truncated fact data is an error, not a
// panic or a wrong fact.
func TestFactCodecCorrupt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := genFnFact().Draw(t, "fn")
		b, _ := f.GobEncode()
		n := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		var g fnFact
		if err := g.GobDecode(b[:n]); err == nil {
			t.Fatalf("a fact cut to %d of %d bytes was read: %v", n, len(b), &g)
		}
	})
}
