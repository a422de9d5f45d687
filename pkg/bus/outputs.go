package bus

// Headers that the translator puts on its outputs (the ir, xds, infra and
// status buckets), so that a replica, or an operator with gatewire tap,
// can tell what a key holds and who wrote it from a headers-only watch.
const (
	// HeaderDigest is the fingerprint of the value without its source
	// revision (hex SHA-256), or "-" on a deletion.
	HeaderDigest = "Gatewire-Digest"
	// HeaderWriter is the id of the translator replica that wrote the
	// value.
	HeaderWriter = "Gatewire-Writer"
)
