// Package config holds the peer comparisons of package
// github.com/agentstate/core/config: its getters and Set next to a
// map behind a sync.RWMutex and koanf v2 (BenchmarkScalarGet and the
// others), and TestHarnessKoanf, which pins the fact about koanf that
// docs/RFC.md (config section) relies on. It lives in the nested module
// bench/ so that koanf never becomes a requirement of the root module's
// importers. It has no API.
package config
