package xdsbucket

// NewSetInParts is a Set whose Assemble gives route configurations in
// parts, as a Stage made with [InParts] holds.
func NewSetInParts() *Set {
	s := NewSet()
	s.inParts = true
	return s
}

// NewSetInPages is NewSetInParts with pages of span virtual hosts on
// average, so that tests of a few hosts see several pages.
func NewSetInPages(span uint32) *Set {
	s := NewSetInParts()
	s.pageSpan = span
	return s
}
