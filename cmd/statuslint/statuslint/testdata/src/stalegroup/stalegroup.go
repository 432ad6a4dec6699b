// Package stalegroup holds two documents loaded at start-up and written
// back by one call: one write call gives one finding, naming both files
// (two findings at one call fail the test). CONTROL: the same call given
// fresh documents.
package stalegroup

import (
	"encoding/json"
	"os"
)

type Doc struct {
	Items map[string]string `json:"items"`
}

var Prefs, Hosts Doc

func init() {
	readInto("prefs.json", &Prefs)
	readInto("hosts.json", &Hosts)
}

func readInto(path string, d *Doc) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	_ = json.Unmarshal(b, d)
}

// saveAll writes both documents back.
func saveAll(prefs, hosts *Doc) error {
	p, _ := json.Marshal(prefs)
	h, _ := json.Marshal(hosts)
	if err := os.WriteFile("prefs.json", p, 0o644); err != nil { // want `not atomic`
		return err
	}
	return os.WriteFile("hosts.json", h, 0o644) // want `not atomic`
}

// Rename changes both documents read at start-up and writes them back.
func Rename(from, to string) error {
	Prefs.Items[to], Hosts.Items[to] = Prefs.Items[from], Hosts.Items[from]
	return saveAll(&Prefs, &Hosts) // want `read-modify-write of "hosts.json" and "prefs.json" without a lock: read at stalegroup.go:\d+ \(readInto\) and stalegroup.go:\d+ \(readInto\) and kept, written back here \(saveAll\).*status.MutateAll`
}

// Reset writes two fresh documents: nothing read is written back (CONTROL).
func Reset() error {
	return saveAll(&Doc{}, &Doc{})
}
