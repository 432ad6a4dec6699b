// Package migration holds no library code. Its tests are the runnable
// examples that docs/MIGRATION.md shows: each "after" of the guide is an
// Example here, compiled and checked against its // Output: by go test, so
// the guide cannot drift from the module's API.
package migration
