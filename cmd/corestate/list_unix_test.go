//go:build unix

package main

import (
	"strings"
	"testing"
)

// fleetTree is a workspace root as the agent services lay it out, with a
// registry, a corrupt document and the files that sit beside documents.
func fleetTree(t *testing.T) string {
	t.Helper()
	return tree(t, map[string]string{
		"acme/api/t1/status.json":                       `{"status": "running", "task": "t1", "pid": 41, "runs": 2, "note": "tab\there"}`,
		"acme/api/t1/status.json.lock":                  "",
		"acme/api/t2/status.json":                       `{"status": "queued", "task": "t2", "runs": 0}`,
		"acme/api/t3/status.json":                       `{"status": "running", "task": "t3", "pid": 43, "runs": 5, "note": "\"quoted\""}`,
		"acme/web/t4/status.json":                       `{"status": "blocked", "task": "t4", "runs": 1, "question": "which db?"}`,
		"acme/web/t4/.status.json.0123456789abcdef.tmp": "{",
		"acme/web/t5/status.json":                       `{"status": "completed", "task": "t5", "runs": 3, "pr_url": null}`,
		"registry.json":                                 `{"active_count": 2, "max_concurrent": 4}`,
		".trash/t0/status.json":                         `{"status": "running", "task": "t0"}`,
	})
}

func TestList(t *testing.T) {
	root := fleetTree(t)
	t.Chdir(root)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"every status document", nil,
			"acme/api/t1/status.json\nacme/api/t2/status.json\nacme/api/t3/status.json\nacme/web/t4/status.json\nacme/web/t5/status.json\n"},
		{"one state, chosen fields", []string{"--where", "status=running", "--fields", "task,pid,runs"},
			"acme/api/t1/status.json\tt1\t41\t2\nacme/api/t3/status.json\tt3\t43\t5\n"},
		{"alternatives", []string{"--where", "status=queued,blocked", "--fields", "task,status"},
			"acme/api/t2/status.json\tt2\tqueued\nacme/web/t4/status.json\tt4\tblocked\n"},
		{"several guards, a comparison", []string{"--where", "status=running", "--where", "runs>=3", "--fields", "task"},
			"acme/api/t3/status.json\tt3\n"},
		{"absent", []string{"--where", "pid=null", "--fields", "task"},
			"acme/api/t2/status.json\tt2\nacme/web/t4/status.json\tt4\nacme/web/t5/status.json\tt5\n"},
		// A Status field a document omits prints its zero value; another missing field null.
		{"missing fields", []string{"--where", "task=t2", "--fields", "pid,question,owner,pr_url"},
			"acme/api/t2/status.json\t0\t\tnull\t\n"},
		{"strings that would break the line", []string{"--where", "status=running", "--fields", "note"},
			"acme/api/t1/status.json\t\"tab\\there\"\nacme/api/t3/status.json\t\"\\\"quoted\\\"\"\n"},
		{"json", []string{"--json", "--where", "task=t4", "--fields", "task,runs,question"},
			"acme/web/t4/status.json\t\"t4\"\t1\t\"which db?\"\n"},
		{"other documents", []string{"--name", "*.json", "--where", "status=null", "--fields", "active_count"},
			"registry.json\t2\n"},
		{"other documents, as status documents", []string{"--name", "registry.json", "--kind", "status", "--fields", "runs"},
			"registry.json\t0\n"},
		{"nothing matches", []string{"--where", "status=merged"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"list", "."}, tc.args...)
			if out := corestate(t, args...).want(t, exitOK).stdout; out != tc.want {
				t.Errorf("corestate %s printed\n%s\nwant\n%s", strings.Join(args, " "), out, tc.want)
			}
		})
	}
}

// A document that cannot be read is reported on stderr and left out; the
// others are listed and list exits with that document's code.
func TestListReportsUnusableDocuments(t *testing.T) {
	root := fleetTree(t)
	writeFile(t, root+"/acme/api/t2/status.json", "{")
	r := corestate(t, "list", root, "--where", "status=running").want(t, exitCorrupt)
	if r.stdout != root+"/acme/api/t1/status.json\n"+root+"/acme/api/t3/status.json\n" {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "corestate: status: corrupt document "+root+"/acme/api/t2/status.json at byte 1") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	// A comparison with a field that holds no number: exit 5, as for set,
	// for a field of status.Status before any document is read, else for
	// each document where it holds something else.
	r = corestate(t, "list", root, "--where", "task>1").want(t, exitBadField)
	if r.stdout != "" || !strings.Contains(r.stderr, "corestate: --where task>1: bad field task") {
		t.Errorf("stdout %q, stderr:\n%s", r.stdout, r.stderr)
	}
	r = corestate(t, "list", root, "--name", "*.json", "--kind", "json", "--where", "status>1").want(t, exitBadField)
	if r.stdout != "" || strings.Count(r.stderr, "/status.json: --where status>1: bad field status: ") != 4 {
		t.Errorf("stdout %q, stderr:\n%s", r.stdout, r.stderr)
	}
	corestate(t, "list", root+"/missing").want(t, exitNotFound)
	corestate(t, "list", root+"/registry.json").want(t, exitUsage)
	corestate(t, "list", "--where", "runs=lots", root).want(t, exitBadField) // not an integer, for status.json
}

// get takes several fields: one line each, in order, from one read.
func TestGetSeveralFields(t *testing.T) {
	root := fleetTree(t)
	file := root + "/acme/api/t1/status.json"
	if out := corestate(t, "get", file, "status", "pid", "runs", "note").want(t, exitOK).stdout; out != "running\n41\n2\ntab\there\n" {
		t.Errorf("get printed %q", out)
	}
	if out := corestate(t, "get", "--json", file, "task", "pid").want(t, exitOK).stdout; out != "\"t1\"\n41\n" {
		t.Errorf("get --json printed %q", out)
	}
	// A missing field: exit 2 and nothing printed, not the fields before it.
	r := corestate(t, "get", file, "status", "nope", "runs").want(t, exitNotFound)
	if r.stdout != "" || !strings.Contains(r.stderr, `field "nope"`) {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
}
