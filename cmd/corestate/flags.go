package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// newFlags returns a flag set for a subcommand. The flag package's own
// messages are discarded: parseFlags reports one line instead.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args with fs, letting flags and positional arguments
// mix ("sweep DIR --older-than 2h" as well as "sweep --older-than 2h DIR"),
// and returns the positional arguments. Everything after "--" is positional.
// -h prints the subcommand's help to out and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printHelp(out, fs.Name())
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
