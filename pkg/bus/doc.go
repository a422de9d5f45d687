// Package bus is gatewire's only channel between services: typed protobuf
// values in JetStream key-value buckets.
//
// Every hand-off is a bucket (see DESIGN.md section 2). The bus is
// level-based: a reader first receives the latest value of every key, then
// each change, so a new or restarted replica needs no other state.
//
// # Buckets, keys and writers
//
//	bucket       key                                   value            written by
//	resources    <Kind>.<namespace or _>.<name>        busv1.Resource   provider
//	resources    Sync._.<source>                       busv1.SyncMark   provider
//	status       <Kind>.<ns or _>.<name>.<gw ns>.<gw>  busv1.Status     translator (xds: Gateway.<ns>.<name>.=xds.<replica>)
//	ir           <namespace>.<gateway>                 irv1.Gateway     translator
//	xds          <namespace>.<gateway>                 busv1.XdsSnapshot translator (the commit)
//	xds          <namespace>.<gateway>.<kind>.<name>   busv1.XdsResource translator (one resource)
//	infra        <namespace>.<gateway>                 busv1.Proxy      translator
//	members      translator.<replica id>               busv1.Member     translator (bucket TTL)
//	proxies      <gw ns>.<gw>.<replica>.<stream>       busv1.ProxyStatus xds (bucket TTL; see [Proxies])
//
// The layout of the xds bucket, a commit per gateway and one key per
// resource so that a change writes only what changed, is package
// xdsbucket's.
//
// # Sync marks
//
// A provider marks in the resources bucket, under [SyncKey] of its source
// ("file", "kubernetes"), whether the bucket holds all it has: SYNCING
// before the first write of its initial scan or list, of a resync, or of
// a batch of changes, and SYNCED after the last. The bucket is read in
// order, so a reader that reads SYNCED holds everything written before it.
// The translator publishes nothing while a mark says SYNCING (until the
// mark's deadline), so the first configuration an Envoy gets is complete,
// and a batch is translated once.
//
// Bucket names are prefixed with the installation name ("gatewire-resources"),
// so several installations can share a NATS cluster. Kubernetes names may
// hold dots, which NATS uses to split subjects: [ResourceKey] and the other
// key functions write them as underscores, which Kubernetes names never hold,
// so every key has a fixed number of tokens and can be matched with wildcards.
//
// # Headers
//
// Every message carries Gatewire-Type (the full name of its proto message, so
// a tap can decode any value), the W3C trace context of the writer
// (traceparent, tracestate), and on outputs Gatewire-Source-Revision: the
// revision of the resources bucket the output was computed from. A
// provider stamps what it publishes with Gatewire-Published, the time of
// the change, which the translator carries onto the outputs of the change
// ([HeaderPublished]). The translator also puts on its outputs
// Gatewire-Digest, the value's fingerprint, and Gatewire-Writer, its
// replica's id ([HeaderDigest], [HeaderWriter]). Writers may add headers
// of their own ([WithHeader]); a [HeadersOnly] watch reads them without
// the values.
//
// The members bucket has a TTL ([WithMemberTTL]): a heartbeat that is not
// renewed ages out, and the server leaves a deletion marker in its place,
// which watchers receive as an [OpDelete] entry (a bucket without markers
// would drop the key silently).
//
// # Large values
//
// Values past [CompressThreshold] are compressed with zstd
// (Gatewire-Encoding: zstd). Values that are still too large for one NATS
// message are stored in the <sys>-objects object store under a content
// address; the KV message then holds only the Gatewire-Object header. Readers
// of this package never see the difference.
//
// # Limits and bad values
//
// A reader decodes a value only within [WithMaxValueBytes] (64 MiB by
// default, at most 256 MiB): a compressed value is expanded through a
// bounded reader and refused once it passes the limit, so a decompression
// bomb costs the limit at most; an object-store value is checked by its
// size before it is read. Writers refuse values past a quarter of the
// limit ([ErrTooLarge]), so readers always read what writers write. An
// entry whose value does not decode is still delivered, with Err set
// (wrapping [ErrBadValue]); the bus counts it
// (gatewire_bus_bad_values_total{bucket}) and logs it with its key.
//
// # A full store
//
// With [WithMaxBytes], each bucket may hold its share of the budget
// ([BucketMaxBytes]): resources 20%, status 10%, ir 15%, xds 25%, infra
// 5%, members 1%, proxies 4%, objects 15%. The server reserves each limit
// when the bucket is created, so a bucket that fills up leaves the others
// room. The buckets discard new messages at their limit, and the server
// still takes a message that replaces a key's value with one no larger:
// a full bucket refuses new keys and growing values with [ErrFull]
// (counted in gatewire_bus_writes_refused_total and logged), while
// deletions and rewrites go through, so a removal always reaches readers.
// Without a budget the server's store is shared, and once it is full
// every write is refused, deletions too. To recover, delete what filled
// the bucket, or raise the budget (and the server's store) on every
// service: each updates the limits of the buckets it creates.
//
// # Ordering and staleness
//
// Outputs are written with [WithSourceRevision]: the write is a
// compare-and-set on the key's KV revision and is refused with [ErrStale] when
// the stored value was computed from a newer source revision, so a slow or
// partitioned replica never overwrites a newer result.
//
// A [Bus] is safe for concurrent use.
package bus
