package file

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
)

// The folder keeps its merged view up to date as files change, so that an
// edit costs what it touches: defs holds, by resources bucket key, every
// document that defines the object, in path then document order; want
// holds the winner of each, the first; conflicted holds the keys defined
// more than once. A key whose definitions changed is touched until the
// next take.

// ref names one object of a source: its path and its place in the objects.
type ref struct {
	path string
	i    int
}

func compareRefs(a, b ref) int {
	return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.i, b.i))
}

// setObjects makes objects the last good content of the source at path
// (nil when it is gone) and updates the merged view.
func (f *folder) setObjects(path string, src *source, objects []manifest.Object) {
	for _, o := range src.objects {
		key := bus.ResourceKey(o.Kind.Kind, o.Namespace, o.Name)
		f.defs[key] = slices.DeleteFunc(f.defs[key], func(r ref) bool { return r.path == path })
		f.touch(key)
	}
	src.objects = objects
	for i, o := range objects {
		key := bus.ResourceKey(o.Kind.Kind, o.Namespace, o.Name)
		r := ref{path: path, i: i}
		at, _ := slices.BinarySearchFunc(f.defs[key], r, compareRefs)
		f.defs[key] = slices.Insert(f.defs[key], at, r)
		f.touch(key)
	}
}

// touch brings want up to date for key and records that it changed.
func (f *folder) touch(key string) {
	f.touched[key] = true
	refs := f.defs[key]
	if len(refs) > 1 {
		f.conflicted[key] = true
	} else {
		delete(f.conflicted, key)
	}
	if len(refs) == 0 {
		delete(f.defs, key)
		delete(f.want, key)
		return
	}
	f.want[key] = f.sources[refs[0].path].objects[refs[0].i]
}

// take returns the keys touched since the last take, and forgets them.
func (f *folder) take() map[string]bool {
	t := f.touched
	f.touched = map[string]bool{}
	return t
}

// merge returns the objects the folder defines, by resources bucket key, from
// the last good content of every file (the caller must not change the map).
// When two documents define the same object, the first in path order (then
// document order) wins and the other is returned as a problem that names
// both places. It costs what the conflicts cost, not what the folder holds.
func (f *folder) merge() (map[string]manifest.Object, []manifest.Problem) {
	var conflicts []manifest.Problem
	for key := range f.conflicted {
		refs := f.defs[key]
		first := f.want[key]
		for _, r := range refs[1:] {
			o := f.sources[r.path].objects[r.i]
			conflicts = append(conflicts, manifest.Problem{
				Path: o.Path, Line: o.Line,
				Message: fmt.Sprintf("%s %s is also defined at %s:%d, which wins (the first file in path order); this one is ignored",
					o.Kind.Kind, o.QualifiedName(), first.Path, first.Line),
			})
		}
	}
	return f.want, conflicts
}
