package statuslint

import (
	"slices"
	"strings"
)

// A nameList is the value of the -readers and -writers flags: functions
// named pkg.Func, pkg.(*T).Method, pkg.T.Method or pkg.Interface.Method,
// separated by commas.
type nameList []string

func (l *nameList) String() string { return strings.Join(*l, ",") }

func (l *nameList) Set(s string) error {
	*l = nil
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l = append(*l, canonicalName(n))
		}
	}
	return nil
}

func (l nameList) has(name string) bool { return slices.Contains(l, name) }

// canonicalName writes pkg.(*T).Method as pkg.T.Method, as objectName does.
func canonicalName(n string) string {
	return strings.NewReplacer("(*", "", "(", "", ")", "").Replace(n)
}
