// Package crash imports the modules whose packages the crash test runs
// statuslint over (with the standard library and golang.org/x/tools): real
// code with the shapes that once made it crash, such as a parameter
// reassigned from a helper of itself (go-cty, the gitea SDK, go-billy).
//
// The step analyses every package of these modules, not only those imported
// here, so go.sum holds the sums of their dependencies too: update it with
// go get <module>/...@<version>, not go mod tidy (which drops them).
package crash

import (
	_ "code.gitea.io/sdk/gitea"
	_ "github.com/go-git/go-billy/v5/osfs"
	_ "github.com/gofrs/flock"
	_ "github.com/knadh/koanf/v2"
	_ "github.com/rogpeppe/go-internal/lockedfile"
	_ "github.com/spf13/afero"
	_ "github.com/spf13/viper"
	_ "github.com/zclconf/go-cty/cty"
	_ "github.com/zclconf/go-cty/cty/msgpack"
	_ "golang.org/x/tools/go/analysis"
)
