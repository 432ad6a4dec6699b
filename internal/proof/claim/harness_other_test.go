//go:build !linux

package claim_test

import "fmt"

func runHelper(mode string) int {
	fmt.Println("no helpers on this system")
	return 1
}
