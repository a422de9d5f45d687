package natsauth

import (
	"fmt"
	"slices"

	"github.com/gatewire/gatewire/pkg/bus"
)

// Subjects are the subjects of one direction, publish or subscribe.
type Subjects struct {
	Allow []string
	Deny  []string
}

// Permissions are what a user may publish and subscribe to.
type Permissions struct {
	Publish   Subjects
	Subscribe Subjects
}

// ObjectsBucket is the name of the object store of large values, without
// the installation prefix (see package bus).
const ObjectsBucket = "objects"

// InboxPrefix is the inbox prefix of a role's connections
// (nats.CustomInboxPrefix): _INBOX.<system>.<role>. A role may subscribe
// under its own prefix only.
func InboxPrefix(system string, role Role) string {
	return "_INBOX." + system + "." + string(role)
}

// For returns the permissions of role in the installation system.
func For(role Role, system string) (Permissions, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return Permissions{}, err
	}
	if err := CheckSystem(system); err != nil {
		return Permissions{}, err
	}
	as, objects := grants(role)
	var pub, deny []string
	// bus.New opens every bucket, used or not: their stream info.
	for _, b := range bus.Buckets {
		pub = append(pub, jsAPI+"STREAM.INFO.KV_"+system+"-"+string(b))
	}
	creates := objects.create
	for _, a := range as {
		pub = append(pub, bucketSubjects(system, a)...)
		for _, k := range a.deny {
			deny = append(deny, kvSubject(system, a.bucket, k))
		}
		creates = creates || a.create
	}
	if creates {
		// The account's JetStream limits, which creating a bucket checks.
		pub = append(pub, jsAPI+"INFO")
	}
	if role == Reader {
		// For the nats CLI of an operator (nats-box): the account's
		// JetStream info and the names of its streams, read-only
		// metadata gatewire tap and status do not need.
		pub = append(pub, jsAPI+"INFO", jsAPI+"STREAM.NAMES", jsAPI+"STREAM.LIST")
	}
	pub = append(pub, objectSubjects(system, objects)...)
	slices.Sort(pub)
	inbox := InboxPrefix(system, role) + ".>"
	if role == Reader {
		// Tools that know nothing of gatewire's inboxes (the nats CLI of
		// nats-box) use _INBOX.; the replies others get hold bus data,
		// which the reader may read anyway.
		inbox = "_INBOX.>"
	}
	return Permissions{
		Publish:   Subjects{Allow: slices.Compact(pub), Deny: deny},
		Subscribe: Subjects{Allow: []string{inbox}},
	}, nil
}

// jsAPI prefixes JetStream's API subjects.
const jsAPI = "$JS.API."

// CheckSystem reports whether system is an installation name, as package
// bus accepts it: letters, digits, '-' and '_'.
func CheckSystem(system string) error {
	if system == "" {
		return fmt.Errorf("natsauth: empty system name")
	}
	for _, r := range system {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("natsauth: system name %q: want letters, digits, '-' or '_'", system)
		}
	}
	return nil
}

func kvSubject(system string, b bus.Bucket, key string) string {
	return "$KV." + system + "-" + string(b) + "." + key
}

// bucketSubjects are the publish subjects of one bucket's access.
func bucketSubjects(system string, a access) []string {
	stream := "KV_" + system + "-" + string(a.bucket)
	var out []string
	if a.create {
		out = append(out, jsAPI+"STREAM.CREATE."+stream, jsAPI+"STREAM.UPDATE."+stream)
	}
	keys := a.keys
	if keys == nil {
		keys = allKeys
	}
	for _, k := range keys {
		subject := kvSubject(system, a.bucket, k)
		if a.watch || a.list {
			// An ordered consumer filtered on the keys read: the filter
			// subject is the last tokens of the request's subject.
			out = append(out, jsAPI+"CONSUMER.CREATE."+stream+".*."+subject)
		}
		if a.get {
			out = append(out, jsAPI+"DIRECT.GET."+stream+"."+subject)
		}
	}
	if a.watch || a.list {
		// An ordered consumer that resets (a reconnection, a missed
		// heartbeat) deletes the consumer it leaves.
		out = append(out, jsAPI+"CONSUMER.DELETE."+stream+".*")
	}
	if a.watch {
		out = append(out, jsAPI+"CONSUMER.MSG.NEXT."+stream+".*")
	}
	if a.list {
		// The flow control of a push consumer, which the server asks for
		// under load.
		out = append(out, "$JS.FC."+stream+".>")
	}
	for _, k := range a.write {
		out = append(out, kvSubject(system, a.bucket, k))
	}
	return out
}

// objectSubjects are the publish subjects of the object store: its stream
// info (bus.New opens it); for readers the metadata of an object and an
// ordered push consumer of its chunks; for writers the chunks and the
// metadata they put and the purge of an object's old chunks.
func objectSubjects(system string, o objectsAccess) []string {
	bucket := system + "-" + ObjectsBucket
	stream := "OBJ_" + bucket
	var out []string
	if o.create {
		out = append(out, jsAPI+"STREAM.CREATE."+stream, jsAPI+"STREAM.UPDATE."+stream)
	} else {
		out = append(out, jsAPI+"STREAM.INFO."+stream)
	}
	if o.read || o.write {
		// Writers read the metadata of what they replace.
		out = append(out, jsAPI+"DIRECT.GET."+stream+".$O."+bucket+".M.*")
	}
	if o.read {
		out = append(out,
			jsAPI+"CONSUMER.CREATE."+stream+".*.$O."+bucket+".C.*",
			jsAPI+"CONSUMER.DELETE."+stream+".*",
			"$JS.FC."+stream+".>",
		)
	}
	if o.write {
		out = append(out, "$O."+bucket+".C.*", "$O."+bucket+".M.*", jsAPI+"STREAM.PURGE."+stream)
	}
	return out
}
