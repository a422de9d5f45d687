package xdsgen

// SetWire turns the wire encoders on or off, for the tests of package
// xdsgen_test, and returns a function that restores the setting.
func SetWire(on bool) (restore func()) {
	was := useWire
	useWire = on
	return func() { useWire = was }
}
