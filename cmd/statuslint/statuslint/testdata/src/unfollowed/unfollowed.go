// Package unfollowed holds calls that the analysis does not follow, which
// -unfollowed reports, next to their CONTROLs, which it follows.
package unfollowed

import (
	"encoding/json"
	"os"
)

type Doc struct{ Name string }

func load() (*Doc, error) {
	data, err := os.ReadFile("doc.json")
	if err != nil {
		return nil, err
	}
	var d Doc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// A Saver is implemented in another package, which this one does not
// import: what its Save does with the document is not seen.
type Saver interface{ Save(d *Doc) error }

func SaveThrough(s Saver) error {
	d, err := load()
	if err != nil {
		return err
	}
	d.Name = "renamed"
	return s.Save(d) // want `not followed: s.Save calls unfollowed.Saver.Save, whose implementations are not in this package or its imports`
}

// CONTROL: a Printer has an implementation here, which touches no file:
// the call is followed.
type Printer interface{ Print(d *Doc) }

type discard struct{}

func (discard) Print(*Doc) {}

func PrintThrough(p Printer) error {
	d, err := load()
	if err != nil {
		return err
	}
	p.Print(d)
	return nil
}

// Hooks are filled by another package: the function OnSave holds is not
// seen.
type Hooks struct{ OnSave func(d *Doc) error }

var hooks Hooks

func SaveHook() error {
	d, err := load()
	if err != nil {
		return err
	}
	d.Name = "renamed"
	return hooks.OnSave(d) // want `not followed: hooks.OnSave calls a function value of type func\(d \*unfollowed.Doc\) error whose functions are not in sight`
}

// CONTROL: a function value given as a parameter is followed by the
// callers, which know what they pass.
func SaveWith(save func(d *Doc) error) error {
	d, err := load()
	if err != nil {
		return err
	}
	return save(d)
}

// CONTROL: a function value of the standard library's types, given no
// document, is no loader of the program's.
var now func() int64

func Stamp() int64 { return now() }
