// Package formats holds the examples of docs/MIGRATION.md for documents
// kept in other formats than JSON (viper's configuration, a YAML or TOML
// round trip, a kubeconfig through client-go) and the "before" code they
// replace, which statuslint must report. It is a module of its own so that
// the libraries it uses stay out of the go.sum of programs that import
// github.com/agentstate/core.
package formats
