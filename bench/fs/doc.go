// Package fs holds the peer comparisons of package
// github.com/agentstate/core/fs: whole-file replacement next to an inline
// durable floor, natefinch/atomic, renameio and os.WriteFile
// (BenchmarkReplace, BenchmarkReplaceInterleaved), and tests that pin the
// facts about natefinch/atomic v1.0.1 that docs/RFC.md (fs section) relies
// on. It lives in the nested module bench/ so that the peers never become
// requirements of the root module's importers. It has no API.
package fs
