// Package shard shares the translator's work among its live replicas.
//
// # Membership
//
// Every replica writes a heartbeat (busv1.Member) under
// bus.MemberKey(id) in the members bucket every heartbeat interval, and
// follows the bucket. A member is live while its heartbeats keep coming: it
// is dropped when none has been seen for the TTL (by the reader's own
// clock), or at once when its key is deleted, which a replica does when it
// stops cleanly. The bucket's own TTL and its deletion markers (see
// bus.WithMemberTTL) clean up after replicas that die; the reader's clock
// does not depend on when the server gets round to it.
//
// A replica that cannot write its own heartbeat (NATS is away) drops no
// one: it cannot tell dead members from its own isolation. When its
// heartbeats go through again, every member gets a fresh TTL to be heard
// from. A replica always counts itself live.
//
// # Ownership
//
// Work items (a gateway's "namespace/name", a GatewayClass's name) are
// assigned by rendezvous hashing: the owner of a key is the live member
// with the highest weight hash(member, key). Every replica computes the
// same owner from the same view, without talking to the others; when a
// member joins, only the keys it now wins move to it, and when one leaves,
// only its keys move, each to its runner-up.
//
// Views of different replicas can differ for a moment (a heartbeat on its
// way, a TTL running out); then two replicas may both work on a key, or
// neither for up to the TTL. The translator makes the first harmless
// (outputs are written with compare-and-set on their source revision, and
// translation is a pure function of the resources) and bounds the second.
package shard
