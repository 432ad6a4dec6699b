//go:build !unix

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "peerbench: the peers' locking (flock) needs a Unix system")
	os.Exit(1)
}
