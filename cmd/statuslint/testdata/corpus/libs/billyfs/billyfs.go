// Package billyfs reads and writes state through go-billy's osfs and util.
package billyfs

import (
	"encoding/json"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-billy/v5/util"
)

type state struct {
	Branch string `json:"branch"`
}

func setBranch(dir, name, branch string) error {
	var fs billy.Filesystem = osfs.New(dir)
	data, err := util.ReadFile(fs, name)
	if err != nil {
		return err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	s.Branch = branch
	out, _ := json.Marshal(s)
	return util.WriteFile(fs, name, out, 0o644) // want `read-modify-write of name without a lock`
}

// copyBranch copies the state of one repository into another: the same
// name under two file systems is two files, so nothing read is written
// back. Not reported (setBranch, with one file system, is the CONTROL).
func copyBranch(from, to, name string) error {
	data, err := util.ReadFile(osfs.New(from), name)
	if err != nil {
		return err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	out, _ := json.Marshal(s)
	return util.WriteFile(osfs.New(to), name, out, 0o644)
}
