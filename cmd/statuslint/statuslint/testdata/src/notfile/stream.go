// Package notfile holds values that are not a file's document although a
// loaded document flows near them (a stream a client returns, an HTTP
// response, a query parameter), and writes of fresh content; each next to
// the read-modify-write CONTROL that must still be reported.
package notfile

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

type settings struct {
	Name string `json:"name"`
	path string
}

func loadSettings(path string) (*settings, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &settings{path: path}
	return s, json.Unmarshal(data, s)
}

// Save writes the settings back to the file they were loaded from.
func (s *settings) Save() error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(s.path, data, 0o600)
}

// saver is a stream of the program that saves what it holds to its own
// path when it is closed: an io.ReadCloser whose Close writes a file.
type saver struct {
	path string
	data []byte
}

func (w *saver) Read(p []byte) (int, error) { return 0, io.EOF }
func (w *saver) Close() error               { return os.WriteFile(w.path, w.data, 0o600) }

// client holds the settings it was made with; the streams it opens are
// answers of a server, made with what the client holds.
type client struct{ cfg *settings }

func newClient(path string) (*client, error) {
	cfg, err := loadSettings(path)
	return &client{cfg: cfg}, err
}

func (c *client) open(name string) io.ReadCloser {
	return io.NopCloser(strings.NewReader(c.cfg.Name + "/" + name))
}

// Fetch reads a stream from a client made with the settings and closes it:
// the Close of a stream writes nothing of the settings, although some
// io.ReadCloser of the program (saver) writes on Close. Not reported.
func Fetch(path, name string) ([]byte, error) {
	c, err := newClient(path)
	if err != nil {
		return nil, err
	}
	r := c.open(name)
	defer r.Close()
	return io.ReadAll(r)
}

type store interface{ Save() error }

// Rename is the CONTROL: the settings, loaded and changed, saved through an
// interface that is not a stream (reported).
func Rename(path, name string) error {
	s, err := loadSettings(path)
	if err != nil {
		return err
	}
	s.Name = name
	var st store = s
	return st.Save() // want `read-modify-write of path without a lock: read at line 80 \(loadSettings\)`
}

// jsonSink is a stream of the program that saves what was written to it
// when it is closed, truncating its file in place: the CONTROL of Index,
// reported where it truncates.
type jsonSink struct {
	dir string
	buf []byte
}

func (j *jsonSink) Write(p []byte) (int, error) { j.buf = append(j.buf, p...); return len(p), nil }
func (j *jsonSink) Close() error {
	return os.WriteFile(filepath.Join(j.dir, "out.json"), j.buf, 0o600) // want `not atomic: os.WriteFile truncates`
}

// get closes a response body: no file is truncated there, although some
// io.Closer of the program (jsonSink) truncates one.
func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// Index gets a document whose URL ends in .json: not reported.
func Index(base string) ([]byte, error) { return get(base + "/index.json") }
