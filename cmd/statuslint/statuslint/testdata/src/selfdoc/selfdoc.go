// Package selfdoc holds a document type that loads and saves itself: a
// program loads it once, keeps it (in a state struct, behind an
// interface) and a handler saves it later. CONTROLs: a fresh object saved,
// and a handler that loads it again under a lock.
package selfdoc

import (
	"encoding/json"
	"os"
	"syscall"
)

type doc struct {
	Name  string            `json:"name"`
	Hosts map[string]string `json:"hosts"`
}

type Settings struct {
	path string
	doc  doc
}

func NewSettings(path string) *Settings { return &Settings{path: path} }

// Load reads the file into the object.
func (s *Settings) Load() error {
	data, err := os.ReadFile(s.path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, &s.doc)
}

// Save writes the object back to its file.
func (s *Settings) Save() error {
	data, err := json.Marshal(s.doc)
	if err != nil {
		return err
	}
	return os.WriteFile(s.path, data, 0o600)
}

func (s *Settings) SetName(n string) { s.doc.Name = n }

// Store is how the handlers see the configuration.
type Store interface {
	Load() error
	Save() error
	SetName(string)
}

type State struct{ store Store }

func (st *State) Config() Store { return st.store }

// Start runs once: the document is loaded and kept.
func Start(path string) (*State, error) {
	s := NewSettings(path)
	if err := s.Load(); err != nil {
		return nil, err
	}
	return &State{store: s}, nil
}

// A handler changes the kept document and saves it.
func Rename(st *State, n string) error {
	c := st.Config()
	c.SetName(n)
	return c.Save() // want `read-modify-write of .* without a lock: read at Settings.Load and kept, written back here \(c.Save\)`
}

type App struct{ settings *Settings }

func (a *App) AddHost(name, url string) error {
	a.settings.doc.Hosts[name] = url
	return a.settings.Save() // want `read-modify-write of .* without a lock: read at Settings.Load and kept, written back here \(a.settings.Save\)`
}

// CONTROL: a fresh document saved.
func Init(path string) error {
	s := NewSettings(path)
	s.SetName("default")
	return s.Save()
}

// CONTROL: the handler loads the document again under a lock.
func RenameLocked(st *State, path, n string) error {
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	c := st.Config()
	if err := c.Load(); err != nil {
		return err
	}
	c.SetName(n)
	return c.Save()
}

// CONTROL: a wrapper that forwards Save to the object it wraps; its
// callers are judged.
type Logged struct{ Store }

func (l *Logged) Save() error {
	return l.Store.Save()
}

// A method that changes and saves its own object: reported inside, once,
// not again at each caller up the chain.
func (s *Settings) Rename(n string) error {
	s.doc.Name = n
	return s.Save() // want `read-modify-write of .* without a lock: read at Settings.Load and kept, written back here \(s.Save\)`
}

func (a *App) Rename(n string) error {
	return a.settings.Rename(n)
}
