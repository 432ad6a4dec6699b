// Package extra reads and writes documents through an interface and a
// client whose methods do not touch files: statuslint sees their
// read-modify-writes only when told, with
//
//	-readers=extra.Docs.Get,extra.(*Client).Fetch -writers=extra.Docs.Put,extra.(*Client).Store
package extra

type Docs interface {
	Get(path string) (map[string]any, error)
	Put(path string, doc map[string]any) error
}

func bump(d Docs, path string) error {
	m, err := d.Get(path)
	if err != nil {
		return err
	}
	m["runs"] = m["runs"].(float64) + 1
	return d.Put(path, m) // want `read-modify-write of path without a lock: read at line 14`
}

// Client keeps documents elsewhere (a remote service, say).
type Client struct{ docs map[string]map[string]any }

func (c *Client) Fetch(key string) map[string]any    { return c.docs[key] }
func (c *Client) Store(key string, m map[string]any) { c.docs[key] = m }

func requeue(c *Client, key string) {
	m := c.Fetch(key)
	m["status"] = "queued"
	c.Store(key, m) // want `read-modify-write of key`
}

// Another document: not reported.
func copyDoc(c *Client, from, to string) { // want copyDoc:`writes \$2`
	c.Store(to, c.Fetch(from))
}
