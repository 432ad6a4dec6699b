// Package wsutil has read and write helpers with names statuslint does not
// know; the facts it exports make their callers in other packages visible.
package wsutil

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/agentstate/core/fs"
)

type Doc struct {
	Status string `json:"status"`
}

func Path(ws string) string { return filepath.Join(ws, "status.json") }

func Get(ws string) (Doc, error) {
	var d Doc
	data, err := os.ReadFile(filepath.Join(ws, "status.json"))
	if err != nil {
		return d, err
	}
	return d, json.Unmarshal(data, &d)
}

func Put(ws string, d Doc) error {
	out, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(filepath.Join(ws, "status.json"), out, 0o644)
}
