// Package deepchain has a helper whose facts grow in every round (a
// recursion that puts an element on the path it passes on): the rounds
// in which the functions of a package learn from each other's facts end
// before it settles, and -unfollowed says so.
package deepchain // want `not followed: the helpers of this package did not settle in 8 rounds`

import "os"

func write(p string, depth int) error {
	if depth == 0 {
		return os.WriteFile(p, nil, 0o644)
	}
	return write(p+"/sub", depth-1)
}

func Save() error { return write("state", 3) }
