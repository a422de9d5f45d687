package manifest

import (
	"errors"
	"fmt"
	"io"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Resource is the Resource a reader of the resources bucket sees for o:
// at the generation the manifest names (o.Generation), else at generation
// 1, as a newly created object; resourceVersion "1", origin "file:<path>:<line>". Its uid
// is in o's object (see the package doc). The file provider publishes the
// same object with its own generation and resourceVersion; gatewire
// translate and the tests use this.
func Resource(o Object) *busv1.Resource {
	return &busv1.Resource{
		Group: o.Kind.Group, Version: o.Kind.Version, Kind: o.Kind.Kind,
		Namespace: o.Namespace, Name: o.Name, Generation: max(o.Generation, 1), ResourceVersion: "1",
		Object: o.JSON, Origin: fmt.Sprintf("file:%s:%d", o.Path, o.Line),
	}
}

// ReadResources reads the manifest r, named path in problems, and returns
// one Resource per object in document order (see Resource). It is all or
// nothing: any problem, including an object defined twice, is an error that
// joins every problem found. It reads at most MaxBytes(0) bytes.
func ReadResources(r io.Reader, path string) ([]*busv1.Resource, error) {
	return ReadResourcesWith(r, path, Options{})
}

// ReadResourcesWith is ReadResources with options; with KeepRefused, the
// problems of refused objects are not errors, and MaxBytes sets the size
// limit.
func ReadResourcesWith(r io.Reader, path string, o Options) ([]*busv1.Resource, error) {
	data, err := ReadAll(r, path, o.MaxBytes)
	if err != nil {
		return nil, err
	}
	objects, problems := DecodeWith(path, data, o)
	var errs []error
	for _, p := range append(problems, Duplicates(objects)...) {
		if !p.Refused || !o.KeepRefused {
			errs = append(errs, p)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := make([]*busv1.Resource, len(objects))
	for i, o := range objects {
		out[i] = Resource(o)
	}
	return out, nil
}

// Duplicates returns a problem for every object defined again after its
// first definition in objects.
func Duplicates(objects []Object) []Problem {
	first := map[string]Object{}
	var out []Problem
	for _, o := range objects {
		key := o.Kind.Kind + "/" + o.Namespace + "/" + o.Name
		if f, dup := first[key]; dup {
			out = append(out, Problem{Path: o.Path, Line: o.Line,
				Message: fmt.Sprintf("%s %s is already defined at %s:%d", o.Kind.Kind, o.QualifiedName(), f.Path, f.Line)})
			continue
		}
		first[key] = o
	}
	return out
}

// QualifiedName is "<namespace>/<name>", or "<name>" for a cluster-scoped
// object.
func (o Object) QualifiedName() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}
