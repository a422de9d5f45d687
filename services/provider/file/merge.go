package file

import (
	"fmt"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/manifest"
)

// merge returns the objects the folder defines, by resources bucket key, from
// the last good content of every file. When two documents define the same
// object, the first in path order (then document order) wins and the other
// is returned as a problem that names both places.
func (f *folder) merge() (map[string]manifest.Object, []manifest.Problem) {
	want := map[string]manifest.Object{}
	var conflicts []manifest.Problem
	for _, path := range f.paths() {
		for _, o := range f.sources[path].objects {
			key := bus.ResourceKey(o.Kind.Kind, o.Namespace, o.Name)
			first, dup := want[key]
			if !dup {
				want[key] = o
				continue
			}
			conflicts = append(conflicts, manifest.Problem{
				Path: o.Path, Line: o.Line,
				Message: fmt.Sprintf("%s %s is also defined at %s:%d, which wins (the first file in path order); this one is ignored",
					o.Kind.Kind, o.QualifiedName(), first.Path, first.Line),
			})
		}
	}
	return want, conflicts
}
