// Package translator is the translator service: it follows the resources
// bucket and publishes, for every Gateway of a gatewire GatewayClass, what
// the gateway means and what its proxies need.
//
// # Buckets
//
//	reads   resources  <Kind>.<namespace or _>.<name>            busv1.Resource
//	writes  ir         <namespace>.<gateway>                     irv1.Gateway
//	writes  xds        <namespace>.<gateway>                     busv1.XdsSnapshot
//	writes  infra      <namespace>.<gateway>                     busv1.Proxy
//	writes  status     <Kind>.<ns or _>.<name>.<gw ns>.<gw>      busv1.Status
//	writes  status     GatewayClass._.<name>.-.-                 busv1.Status
//	both    members    translator.<replica id>                   busv1.Member
//
// A GatewayClass's status depends on no gateway, so its key names the
// gateway "-" (never a Kubernetes name); see [ClassStatusKey].
//
// # Data flow
//
// The pipeline of one gateway is [Translate]: the [resources.Index] goes
// through package gatewayapi (IR, statuses, proxy spec) and package xdsgen
// (validated xDS resources, one per key of the xds bucket). What does not
// validate is reported on the Gateway (Programmed: False) and its previous
// xDS snapshot is kept.
//
// The service translates incrementally: per session it keeps a
// gatewayapi.Translator (a gateway's listeners and route units, reused
// while what they read is unchanged; a patch of the last translation when
// only routes and what they name changed) and an xdsgen.Builder per gateway
// (the encoded resource of every IR piece, encoded again only when the
// piece is new). A route edit among thousands translates one route, encodes
// one virtual host, and writes that virtual host, the commit and the
// route's status. Its results are those of Translate (property tests).
//
// The [Service] keeps the index up to date from the resources bucket. Once
// the bucket's initial content is read it translates every gateway it owns
// (and removes outputs that no longer have a gateway); then it translates
// only the gateways that changes affect (see [resources.Change]), as soon
// as no change is waiting in its watch (or after
// GATEWIRE_TRANSLATOR_DEBOUNCE when set), so that a lone edit is
// translated at once and a burst in a few translations.
//
// The providers mark the resources bucket while they sync (busv1.SyncMark
// under bus.SyncKey): while any provider says SYNCING, until the mark's
// deadline, the service translates nothing and lets changes gather; when
// the last says SYNCED it translates what they affect, once. So the first
// configuration of a gateway is translated from everything the providers
// had at start, after a provider restart too, and a provider's batch of
// changes is translated once.
//
// Every output is written with the revision of the resources bucket it was
// computed from (bus.WithSourceRevision), and only when it differs from
// what is stored: the xDS first, then the proxy spec; the statuses while
// no change waits, 64 at a time in batches, so that an edit does not wait
// behind the thousands of statuses of a load (a newer translation of the
// gateway takes the place of one whose statuses are not all written); and
// the IR, the largest output and one for people and tools,
// once translations have paused for 250ms (at most 5s after the first IR
// not written), with those of other gateways translated meanwhile, so
// that a burst of edits writes each IR once. The IRs are encoded in a
// goroutine of their own, so that an edit does not wait for them. Each gateway's
// translation is one OpenTelemetry span (tracer "gatewire/translator"), a
// child of the trace of the latest change that affected it.
//
// # Replicas
//
// Replicas share the gateways (see package shard). Each writes a heartbeat
// to the members bucket every GATEWIRE_TRANSLATOR_HEARTBEAT (1s) and
// counts as live until GATEWIRE_TRANSLATOR_MEMBER_TTL (3s) after its last
// one; a replica that stops cleanly leaves at once. A gateway belongs to
// the live replica that rendezvous hashing over "<namespace>/<name>"
// picks, a GatewayClass's status to the one it picks over the class name.
// When the membership changes, a replica translates the gateways it gains
// and forgets those it loses; no other gateway is translated again. The
// gateways of a replica that dies are taken over at most the TTL after its
// last heartbeat, plus the debounce and their translation.
//
// While views of the membership differ (for up to the TTL), two replicas
// may translate one gateway. That is harmless: translation is a pure
// function of the resources, and a write is refused when the stored output
// comes from a newer revision, so a slow or partitioned replica never
// overwrites a newer result. To keep the bus holding the owner's
// translation, each replica follows the output buckets (headers only: every
// output carries the fingerprint of its value in Gatewire-Digest and its
// writer's id in Gatewire-Writer). When another writer changes an output
// of a gateway this replica owns, computed from resources no newer than
// those it has read, the replica writes its own again.
//
// The service outlives NATS: while NATS is away its writes fail and it
// starts its session over (reading the buckets again) until NATS is back;
// the bus watches resume where they left off.
package translator
