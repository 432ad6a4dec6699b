package notfile

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/agentstate/core/fs"
)

type manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// env is what the program runs with: a proxy, from the user's settings.
type env struct{ proxy string } // want env:`^methods cacheManifest: writes \$1; httpClient:`

func (e *env) httpClient() *http.Client {
	u, err := url.Parse(e.proxy)
	if err != nil {
		return http.DefaultClient
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
}

// cacheManifest saves what a server answers at url in the file cache: it
// reads no file, neither one its receiver nor one its url could hold.
func (e *env) cacheManifest(url, cache string) error {
	resp, err := e.httpClient().Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var m manifest
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(cache, data, 0o600)
}

// bumpManifest is the CONTROL: the manifest read from the file, changed
// and written back.
func bumpManifest(path, version string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	m.Version = version
	out, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(filepath.Clean(path), out, 0o600) // want `read-modify-write of path without a lock`
}
