// Command statuslint reports bare read-modify-write cycles and in-place
// writes of JSON state files such as an agent workspace's status.json.
//
// Run it alone:
//
//	statuslint ./...
//
// or through go vet:
//
//	go vet -vettool=$(command -v statuslint) ./...
//
// See package github.com/agentstate/core/cmd/statuslint/statuslint for what
// it reports.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/agentstate/core/cmd/statuslint/statuslint"
)

func main() { singlechecker.Main(statuslint.Analyzer) }
