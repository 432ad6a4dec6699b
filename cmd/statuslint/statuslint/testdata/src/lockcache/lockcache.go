// Package lockcache holds read-modify-writes under a lock file created
// with O_CREATE|O_EXCL (client-go's kubeconfig lock), under a project's
// own lock function (named by -lockers in TestLockers), and cache refills,
// each next to the unlocked or read-back CONTROL that must be reported.
package lockcache

import (
	"encoding/json"
	"errors"
	"os"
)

type config struct {
	Current string            `json:"current"`
	Users   map[string]string `json:"users"`
}

func load(path string) (*config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func save(path string, c *config) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// lockFile takes the lock as client-go does: the lock file is created
// exclusively; another holder makes the open fail.
func lockFile(path string) error {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_EXCL, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

func unlockFile(path string) error { return os.Remove(path + ".lock") }

// SwitchLocked changes the current user under the exclusive-create lock:
// not reported.
func SwitchLocked(path, user string) error {
	if err := lockFile(path); err != nil {
		return err
	}
	defer unlockFile(path)
	c, err := load(path)
	if err != nil {
		return err
	}
	c.Current = user
	return save(path, c)
}

// SwitchUnlocked is the CONTROL: the same without the lock.
func SwitchUnlocked(path, user string) error {
	c, err := load(path)
	if err != nil {
		return err
	}
	c.Current = user
	return save(path, c) // want `read-modify-write of path without a lock: read at line 67 \(load\), written back here \(save\)`
}

// SwitchReleased releases the lock file before it writes: reported.
func SwitchReleased(path, user string) error {
	if err := lockFile(path); err != nil {
		return err
	}
	c, err := load(path)
	if err != nil {
		return err
	}
	if err := unlockFile(path); err != nil {
		return err
	}
	c.Current = user
	return save(path, c) // want `read-modify-write of path without a lock: read at line 80`
}

// own is a project's own lock, which -lockers names in TestLockers: it
// takes an in-process and an advisory lock the analysis cannot see.
type own struct{}

func (own) Lock(path string) (unlock func()) { return func() {} }

// SetWithOwnLock is reported without -lockers and not with it.
func SetWithOwnLock(l own, path, user string) error {
	defer l.Lock(path)()
	c, err := load(path)
	if err != nil {
		return err
	}
	c.Users[user] = "set"
	return save(path, c) // want `read-modify-write of path without a lock`
}

// Cached returns the cached document, and fills the cache from fetch when
// there is none: what it writes holds nothing it read. Not reported.
func Cached(path string, fetch func() *config) (*config, error) {
	c, err := load(path)
	if err != nil {
		c = fetch()
		if err := save(path, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CachedOrCreated is the same with the test the other way round.
func CachedOrCreated(path string) (*config, error) {
	c, err := load(path)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	c = &config{Users: map[string]string{}}
	return c, save(path, c)
}

// RefreshStale is the CONTROL: a document that was read, found stale and
// written again is a decision on what was read (reported).
func RefreshStale(path string, fetch func() *config) (*config, error) {
	c, err := load(path)
	if err == nil && c.Current != "" {
		return c, nil
	}
	c = fetch()
	return c, save(path, c) // want `read-modify-write of path without a lock: read at line 137`
}

// CreatedIfMissing writes a default document when the read says there is
// none, told by errors.Is: not reported.
func CreatedIfMissing(path string) (*config, error) {
	c, err := load(path)
	if errors.Is(err, os.ErrNotExist) {
		c = &config{Users: map[string]string{}}
		return c, save(path, c)
	}
	return c, err
}

type notFound struct{}

func (notFound) Error() string { return "not found" }

func loadOrNotFound(path string) (*config, error) {
	c, err := load(path)
	if err != nil {
		return nil, notFound{}
	}
	return c, nil
}

// CreatedOnNotFound is the same, told by a type assertion.
func CreatedOnNotFound(path string) (*config, error) {
	c, err := loadOrNotFound(path)
	if _, ok := err.(notFound); ok {
		c = &config{Users: map[string]string{}}
		return c, save(path, c)
	}
	return c, err
}

// loadFresh returns no document when there is none or it is stale.
func loadFresh(path string) (*config, error) {
	c, err := load(path)
	if err != nil || c.Current == "" {
		return nil, nil
	}
	return c, nil
}

// CachedUnlessNil fills the cache when the loader gives no document (it
// decides what a miss is): what it writes holds nothing it read. Not
// reported.
func CachedUnlessNil(path string, fetch func() *config) (*config, error) {
	c, err := loadFresh(path)
	if err != nil {
		return nil, err
	}
	if c != nil {
		return c, nil
	}
	c = fetch()
	return c, save(path, c)
}

// DefaultIfNil is the CONTROL: a document made when there is none, then
// changed and written on both paths, writes back what was read
// (reported).
func DefaultIfNil(path string) error {
	c, err := loadFresh(path)
	if err != nil {
		return err
	}
	if c == nil {
		c = &config{Users: map[string]string{}}
	}
	c.Current = "x"
	return save(path, c) // want `read-modify-write of path without a lock: read at line 206`
}

// lookup reads the cached document of key, and tells whether there was one.
func lookup(dir, key string) (*config, bool, error) {
	c, err := load(dir + "/" + key)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return c, err == nil, err
}

// CachedByKey fills the cache after a lookup that found nothing: a miss
// told by a boolean result. Not reported.
func CachedByKey(dir, key string, fetch func() *config) (*config, error) {
	c, found, err := lookup(dir, key)
	if err != nil {
		return nil, err
	} else if found {
		return c, nil
	}
	c = fetch()
	return c, save(dir+"/"+key, c)
}

// RefreshByKey is the CONTROL: the document found, judged stale and
// written again (reported).
func RefreshByKey(dir, key string, fetch func() *config) (*config, error) {
	c, found, err := lookup(dir, key)
	if err != nil {
		return nil, err
	} else if found && c.Current != "" {
		return c, nil
	}
	c = fetch()
	return c, save(dir+"/"+key, c) // want `read-modify-write of dir \+ "/" \+ key without a lock`
}
