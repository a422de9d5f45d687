// Package natsauth is who may do what on gatewire's NATS bus: one NATS user
// per role, each allowed exactly the subjects of its role, and the nkeys and
// nats.conf authorization blocks that make it so.
//
// # Roles
//
//	role        reads                                  writes
//	provider    resources, status                      resources, large values
//	translator  resources, status, ir, xds, infra,     status (not the =xds and =infra entries),
//	            members                                ir, xds, infra, members, large values
//	xds         xds, its own status entries            status Gateway.*.*.=xds.<replica>
//	infra       infra, its own status entries          status Gateway.*.*.=infra.=infra
//	reader      every bucket                           nothing (gatewire tap, gatewire status, nats-box)
//
// Every role reads the <sys>-objects object store (values too large for one
// message are kept there, by content address, for whichever bucket they
// belong to); the provider and the translator write it.
//
// # Buckets and their creators
//
// A role creates only the buckets it writes alone ([Creates]): the provider
// the resources bucket, the translator the others and the object store.
// Every role opens the rest without changing them (JetStream's STREAM.INFO)
// and waits until they exist, so no role may change the limits of a bucket
// it does not own, and none may delete or purge a bucket.
//
// # Subjects
//
// The permissions ([For]) are allow lists of publish and subscribe
// subjects. Besides $KV.<bucket>.<key> for the writes, they hold the
// JetStream API requests of the bus package, found by running it against a
// real nats-server (see the tests): STREAM.INFO of every bucket; for a
// bucket read, CONSUMER.CREATE (the ordered consumers of a watch, filtered
// by key in the request subject), CONSUMER.INFO, CONSUMER.DELETE,
// CONSUMER.MSG.NEXT and DIRECT.GET (the last value of a key), and the flow
// control replies $JS.FC.<stream>.>; for a bucket a role creates,
// STREAM.CREATE and STREAM.UPDATE; for the object store, its chunk and
// metadata subjects and STREAM.PURGE (an overwritten object's old chunks).
// Reads scoped to some keys (the xds and infra roles' own status entries)
// are scoped in CONSUMER.CREATE and DIRECT.GET, whose subjects carry the
// key. Replies come to an inbox of the role's own ([InboxPrefix]), so no
// user can subscribe to the replies another one receives; the reader alone
// may subscribe to every inbox (_INBOX.>), so that the stock nats CLI works
// as it: what others receive there is bus data, which it may read anyway.
//
// # Users and configuration
//
// [NewUser] makes a user of a role with a new nkey; its seed is the user's
// secret (the file GATEWIRE_NATS_NKEY_SEED names), its public key goes into
// the server's configuration. [AuthConfig] renders the accounts block of
// nats.conf for a set of users: one account, GATEWIRE, with JetStream, holding
// every user with its permissions. deploy/k8s includes it from a Secret;
// gatewire standalone loads the same text into its embedded server.
package natsauth
