package flock

// For the tests of package flock_test, which use package status.
var CloseKept = closeKept

// NoRecheck and KeepAlways are s's switches of the identity checks and of
// keeping every descriptor.
func (s *Seams) NoRecheck() *bool  { return &s.noRecheck }
func (s *Seams) KeepAlways() *bool { return &s.keepAlways }
