// Package xdsbucket is the layout of the <sys>-xds bucket: how the
// translator writes the xDS resources of a gateway, one key each, and the
// commit that makes them a snapshot; and how readers (the xds service,
// gatewire's commands) put them back together.
//
// # Keys
//
//	<namespace>.<gateway>                 busv1.XdsSnapshot: the commit, no resources inline
//	<namespace>.<gateway>.<kind>.<name>   busv1.XdsResource: one resource
//
// The kind is one of lds (listeners), rds (route configurations, without
// their virtual hosts), vh (virtual hosts), cds (clusters), eds (cluster
// load assignments), sds (secrets) and api (the API listeners of proxyless
// gRPC clients). The name is the base64url encoding, without padding, of
// the resource's name, or for a virtual host of "<route configuration>/<name>".
//
// # Writing
//
// A writer puts every resource that is new or changed, purges those that
// are gone, and then puts the commit: the snapshot's version and source
// revision and, for each type, its served version, how many resource keys
// it is made of and their [Digest]s XORed together. Only resources that
// changed are written, so a route edit among thousands writes one virtual
// host and one commit. A route configuration is written as its shell (the
// message without virtual_hosts) and one key per virtual host, so that a
// virtual host's edit does not write the others again.
//
// # Reading
//
// Readers follow the bucket in order, so a commit comes after the
// resources it names. A [Stage] holds the resources of each gateway as
// they come and, on a commit whose counts and digests it holds, assembles
// the snapshot with its resources inline ([Assemble]): route configurations
// are their shell with their virtual hosts, sorted by order, in place of
// field virtual_hosts. A commit that does not match (a writer's resources
// still on their way, or a foreign write) is held until the resources
// match it or another commit comes. The assembled bytes are the bytes the
// translator built: a snapshot read from the bus is byte-identical to the
// one translated in memory. Each assembled type lists its resources'
// versions (resource_versions; a route configuration's is a hash of its
// parts' versions), and a stage made with [InParts] gives route
// configurations as their parts (resource_parts): pages of virtual hosts,
// each copied once and reused while its hosts do not change, for a reader
// that sends them on without joining them.
package xdsbucket
