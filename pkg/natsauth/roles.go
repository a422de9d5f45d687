package natsauth

import (
	"fmt"
	"slices"

	"github.com/gatewire/gatewire/pkg/bus"
)

// Role is what one NATS user of gatewire does.
type Role string

// The roles.
const (
	Provider   Role = "provider"
	Translator Role = "translator"
	XDS        Role = "xds"
	Infra      Role = "infra"
	// Reader reads every bucket and writes nothing: gatewire tap, gatewire
	// status and the nats CLI of an operator.
	Reader Role = "reader"
)

// Roles lists every role.
var Roles = []Role{Provider, Translator, XDS, Infra, Reader}

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	if r := Role(s); slices.Contains(Roles, r) {
		return r, nil
	}
	return "", fmt.Errorf("natsauth: unknown role %q: want one of %v", s, Roles)
}

// access is what a role may do with one bucket.
type access struct {
	bucket bus.Bucket
	// keys are the key patterns it may read; nil for every key.
	keys []string
	// How it reads: watch (bus.Watch, a pull consumer), list (bus.Keys, a
	// push consumer), get (bus.Get, and the last value a compare-and-set
	// write checks: JetStream's direct get).
	watch, list, get bool
	// write are the key patterns it may write; deny those it may not
	// among them.
	write, deny []string
	// create: the role creates the bucket and sets its limits.
	create bool
}

// objectsAccess is what a role may do with the object store.
type objectsAccess struct{ read, write, create bool }

// Status keys that are not the translator's: the xds and infra services'
// own entries (see bus.DataPlane and bus.Infrastructure).
var (
	xdsStatusKeys   = []string{"Gateway.*.*." + bus.DataPlane + ".*"}
	infraStatusKeys = []string{"Gateway.*.*." + bus.Infrastructure + "." + bus.Infrastructure}
	otherStatusKeys = []string{"*.*.*." + bus.DataPlane + ".*", "*.*.*." + bus.Infrastructure + ".*"}
	allKeys         = []string{">"}
)

// grants is the access of each role, the table of the package doc, as the
// services use the bus. It was checked against a real server by taking each
// subject away in turn and running TestEveryRoleDoesItsJob: every one is
// needed but three kinds, kept for paths that test cannot reach:
// CONSUMER.DELETE (an ordered consumer that resets after a reconnection
// deletes its old consumer), $JS.FC (the server asks a push consumer for
// flow control under load), and the reader's INFO and STREAM.NAMES/LIST
// (the nats CLI of nats-box).
func grants(role Role) ([]access, objectsAccess) {
	switch role {
	case Provider:
		return []access{
			// Written, and watched for the resync of a restart.
			{bucket: bus.Resources, watch: true, write: allKeys, create: true},
			// Watched, and written back to Kubernetes.
			{bucket: bus.Status, watch: true},
		}, objectsAccess{read: true, write: true}
	case Translator:
		// Every output is watched (headers only: the ledger of what is on
		// the bus) and written with compare-and-set.
		return []access{
			{bucket: bus.Resources, watch: true},
			{bucket: bus.Status, watch: true, get: true, write: allKeys, deny: otherStatusKeys, create: true},
			{bucket: bus.IR, watch: true, get: true, write: allKeys, create: true},
			{bucket: bus.XDS, watch: true, get: true, write: allKeys, create: true},
			{bucket: bus.Infra, watch: true, get: true, write: allKeys, create: true},
			{bucket: bus.Members, watch: true, write: allKeys, create: true},
			// Made by the translator with the other outputs; the xds
			// service writes it.
			{bucket: bus.Proxies, create: true},
		}, objectsAccess{read: true, write: true, create: true}
	case XDS:
		return []access{
			// Each gateway's keys watched, its commit read.
			{bucket: bus.XDS, watch: true, get: true},
			// Its own entries listed, read, written and deleted.
			{bucket: bus.Status, keys: xdsStatusKeys, list: true, get: true, write: xdsStatusKeys},
			// What its streams hold, for gatewire proxy-status.
			{bucket: bus.Proxies, write: allKeys},
		}, objectsAccess{read: true}
	case Infra:
		// infra values are small (ports, not routes): never in the
		// object store.
		return []access{
			{bucket: bus.Infra, watch: true, list: true},
			{bucket: bus.Status, keys: infraStatusKeys, list: true, write: infraStatusKeys},
		}, objectsAccess{}
	case Reader:
		var out []access
		for _, b := range bus.Buckets {
			out = append(out, access{bucket: b, watch: true, list: true, get: true})
		}
		return out, objectsAccess{read: true}
	}
	return nil, objectsAccess{}
}

// Creates lists the buckets role creates, and whether it creates the object
// store; bus.New opens the others without changing them (bus.WithCreate).
func Creates(role Role) (buckets []bus.Bucket, objects bool) {
	as, o := grants(role)
	for _, a := range as {
		if a.create {
			buckets = append(buckets, a.bucket)
		}
	}
	return buckets, o.create
}
