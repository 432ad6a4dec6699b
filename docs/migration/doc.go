// Package migration holds no library code. Its tests are the runnable
// examples that docs/MIGRATION.md shows: each "after" of the guide is an
// Example here, compiled and checked against its // Output: by go test, so
// the guide cannot drift from the module's API. The Go blocks of README.md
// are checked the same way: each is an Example_readme* here (or, for the
// etcd backend, an Example of status/etcdstore). The guide's "before" code
// is in testdata/src (before: the older ReadStatus style; today: the
// services as they are written now), where a test requires statuslint to
// report every read-modify-write. docs_test.go checks that every block and
// command of both documents can be pasted as it is, and that every name of
// this module they use exists.
package migration
