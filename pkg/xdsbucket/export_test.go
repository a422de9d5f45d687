package xdsbucket

// NewSetInParts is a Set whose Assemble gives route configurations in
// parts, as a Stage made with [InParts] holds.
func NewSetInParts() *Set {
	s := NewSet()
	s.inParts = true
	return s
}
