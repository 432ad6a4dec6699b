package status

// SetCommitHook sets, for the cross-process tests of package status_test,
// the function called after each step of a commit (see txCrash); nil
// removes it.
func SetCommitHook(f func(step string) bool) { txCrash = f }
