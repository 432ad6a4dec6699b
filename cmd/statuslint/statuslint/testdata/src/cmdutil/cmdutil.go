// Package cmdutil holds what every command is given: its options carry
// the configuration's loader, which a package the commands do not import
// sets (the program's main package, in a real command-line tool).
package cmdutil

import "appconf"

// Factory is built once by the program and given to every command.
type Factory struct {
	Config  func() (appconf.Config, error)
	Version func() ([]byte, error)
}
