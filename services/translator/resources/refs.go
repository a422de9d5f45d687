package resources

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// ObjectKey names one object of the index: its kind (as in resource keys),
// namespace and name.
type ObjectKey struct {
	Kind string
	types.NamespacedName
}

// key returns the ObjectKey of the object kind namespace/name.
func key(kind string, nn types.NamespacedName) ObjectKey {
	return ObjectKey{Kind: kind, NamespacedName: nn}
}

// namespacePair is a reference from an object in namespace From to an
// object in namespace To: what a ReferenceGrant in To may allow.
type namespacePair struct{ From, To string }

// refIndex is a reverse index: for each target, the objects that refer to it.
// It remembers what each object referred to so that replacing or removing
// the object drops its old references. The objects of a target are a list
// in no order, not a set: most targets have one or two, and a map each
// would cost hundreds of bytes; an object's references are few, so
// dropping them scans few lists. Those lists can be long (the routes of a
// gateway), so an object set again with the same references is left in
// them.
type refIndex[T comparable] struct {
	by   map[T][]ObjectKey
	from map[ObjectKey][]T
	// revs holds the revision of the objects of each target (see
	// revisions): every set of a source bumps those of its old and new
	// targets, so a computation that read the objects of a target knows
	// when any of them, or which they are, changed.
	revs revisions[T]
}

func newRefIndex[T comparable](clock *uint64, log *changeLog) refIndex[T] {
	return refIndex[T]{by: map[T][]ObjectKey{}, from: map[ObjectKey][]T{}, revs: newRevisions[T](clock, log)}
}

// set replaces the targets src refers to; nil targets removes src.
func (r refIndex[T]) set(src ObjectKey, targets []T) {
	if old, ok := r.from[src]; ok && len(targets) > 0 && slices.Equal(old, targets) {
		// An edit that keeps the references (most do): src stays where it
		// is in the lists, which may be long (every route of a gateway).
		for _, t := range targets {
			r.revs.bump(t)
		}
		r.from[src] = targets
		return
	}
	for _, t := range r.from[src] {
		r.revs.bump(t)
		r.drop(t, src)
	}
	for _, t := range targets {
		r.revs.bump(t)
	}
	delete(r.from, src)
	if len(targets) == 0 {
		return
	}
	r.from[src] = targets
	for i, t := range targets {
		if slices.Contains(targets[:i], t) {
			continue // src is listed under t once
		}
		r.by[t] = append(r.by[t], src)
	}
}

// drop removes src from the objects that refer to t.
func (r refIndex[T]) drop(t T, src ObjectKey) {
	s := r.by[t]
	i := slices.Index(s, src)
	if i < 0 {
		return
	}
	last := len(s) - 1
	s[i] = s[last]
	s[last] = ObjectKey{}
	if last == 0 {
		delete(r.by, t)
		return
	}
	r.by[t] = s[:last]
}

// sources returns the objects that refer to t, sorted by kind, namespace
// and name.
func (r refIndex[T]) sources(t T) []ObjectKey {
	out := slices.Clone(r.by[t])
	slices.SortFunc(out, compareKeys)
	return out
}

// sourcesOf returns the names of the objects of kind that refer to t,
// sorted by namespace and name.
func (r refIndex[T]) sourcesOf(kind string, t T) []types.NamespacedName {
	var out []types.NamespacedName
	for _, k := range r.by[t] {
		if k.Kind == kind {
			out = append(out, k.NamespacedName)
		}
	}
	slices.SortFunc(out, compareNames)
	return out
}

// targets returns what src refers to; the slice is owned by the index.
func (r refIndex[T]) targets(src ObjectKey) []T { return r.from[src] }

func compareKeys(a, b ObjectKey) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), compareNames(a.NamespacedName, b.NamespacedName))
}

func compareNames(a, b types.NamespacedName) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// uniq appends t to s unless s already holds it; reference lists are short.
func uniq[T comparable](s []T, t T) []T {
	if slices.Contains(s, t) {
		return s
	}
	return append(s, t)
}
