// Package deepchain is a chain of helpers longer than the rounds in which
// the functions of a package learn from each other's facts: what the last
// one does does not reach the first, and -unfollowed says so.
package deepchain // want `not followed: the helpers of this package did not settle in 8 rounds`

import "os"

func h1(p string) error  { return h2(p) }
func h2(p string) error  { return h3(p) }
func h3(p string) error  { return h4(p) }
func h4(p string) error  { return h5(p) }
func h5(p string) error  { return h6(p) }
func h6(p string) error  { return h7(p) }
func h7(p string) error  { return h8(p) }
func h8(p string) error  { return h9(p) }
func h9(p string) error  { return h10(p) }
func h10(p string) error { return os.WriteFile(p, nil, 0o644) }

func Save() error { return h1("state.yaml") }
