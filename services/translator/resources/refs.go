package resources

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// refIndex is a reverse index: for each target, the objects that refer to it.
// It remembers what each object referred to so that replacing or removing
// the object drops its old references.
type refIndex[T comparable] struct {
	by   map[T]map[types.NamespacedName]struct{}
	from map[types.NamespacedName][]T
}

func newRefIndex[T comparable]() refIndex[T] {
	return refIndex[T]{by: map[T]map[types.NamespacedName]struct{}{}, from: map[types.NamespacedName][]T{}}
}

// set replaces the targets src refers to; nil targets removes src.
func (r refIndex[T]) set(src types.NamespacedName, targets []T) {
	for _, t := range r.from[src] {
		s := r.by[t]
		delete(s, src)
		if len(s) == 0 {
			delete(r.by, t)
		}
	}
	delete(r.from, src)
	if len(targets) == 0 {
		return
	}
	r.from[src] = targets
	for _, t := range targets {
		s := r.by[t]
		if s == nil {
			s = map[types.NamespacedName]struct{}{}
			r.by[t] = s
		}
		s[src] = struct{}{}
	}
}

// sources returns the objects that refer to t, sorted by namespace and name.
func (r refIndex[T]) sources(t T) []types.NamespacedName {
	s := r.by[t]
	out := make([]types.NamespacedName, 0, len(s))
	for nn := range s {
		out = append(out, nn)
	}
	slices.SortFunc(out, compareNames)
	return out
}

// targets returns what src refers to; the slice is owned by the index.
func (r refIndex[T]) targets(src types.NamespacedName) []T { return r.from[src] }

func compareNames(a, b types.NamespacedName) int {
	if a.Namespace != b.Namespace {
		if a.Namespace < b.Namespace {
			return -1
		}
		return 1
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

// uniq appends t to s unless s already holds it; reference lists are short.
func uniq[T comparable](s []T, t T) []T {
	if slices.Contains(s, t) {
		return s
	}
	return append(s, t)
}
