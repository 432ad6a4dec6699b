// Package crosspkg uses the helpers of package wsutil.
package crosspkg

import "wsutil"

func Complete(ws string) error {
	d, err := wsutil.Get(ws)
	if err != nil {
		return err
	}
	d.Status = "completed"
	return wsutil.Put(ws, d) // want `read-modify-write of filepath\.Join\(ws, "status\.json"\) without a lock: read at line 7`
}

func Reset(ws, other string) error {
	d, err := wsutil.Get(other)
	if err != nil {
		return err
	}
	return wsutil.Put(ws, d) // a different workspace: not reported
}
