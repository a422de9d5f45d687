// Package manifest reads Kubernetes objects from YAML and JSON manifests, the
// way the file provider sees them.
//
// A manifest holds one or more documents separated by "---"; a document is an
// object, or a v1 List whose items are objects. Every object must name its
// apiVersion, kind and metadata.name, be of one of the kinds in Kinds in a
// version the API server serves (for the Gateway API kinds, the versions
// their CustomResourceDefinitions in the pinned sigs.k8s.io/gateway-api,
// experimental channel, serve: GRPCRoute v1 only, ReferenceGrant v1 and
// v1beta1, TLSRoute v1, v1alpha2 and v1alpha3; see crds.go), and
// decode strictly into that kind's Go type (sigs.k8s.io/gateway-api apis/v1,
// k8s.io/api): an unknown field such as spec.listners, a duplicate key or a
// value of the wrong type is a Problem that names the file and the line of the
// offending field (or of the document, when the field cannot be placed).
// It must then pass the checks the Kubernetes API server makes on create
// (package validate: the Gateway API CRDs' schemas and CEL rules, the core
// kinds' field checks); an object the API server would refuse is a Problem
// that names the object and the field, at the field's line, and the object
// is published with the defaults the API server would apply.
//
// Decode normalizes what it returns, so that the same files always give the
// same bytes:
//   - apiVersion is the kind's published version (Kind.Version);
//   - status, metadata.managedFields, metadata.generation and
//     metadata.resourceVersion are removed (the caller that publishes the
//     object owns generation and resourceVersion);
//   - a namespaced object without a namespace is in "default", and a
//     cluster-scoped object loses any namespace it names;
//   - metadata.uid, when absent, is UID(kind, namespace, name);
//   - metadata.creationTimestamp, when absent, is the Unix epoch
//     (1970-01-01T00:00:00Z): route precedence falls back on creation time,
//     and files carry none, so every file object is equally old and ties are
//     broken by namespace and name, as the Gateway API specifies.
//
// The package is safe for concurrent use; it keeps no state.
package manifest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gatewire/gatewire/pkg/manifest/validate"
)

// Epoch is the creationTimestamp of objects whose manifest names none.
const Epoch = "1970-01-01T00:00:00Z"

// Object is one object read from a manifest.
type Object struct {
	// Kind is what the object is published as.
	Kind Kind
	// Namespace is empty for cluster-scoped kinds.
	Namespace string
	Name      string
	// Path is the manifest the object was read from, as given to Decode.
	Path string
	// Line is the 1-based line the object's document starts on (its first key).
	Line int
	// JSON is the normalized object (see the package doc); keys are sorted.
	JSON []byte
	// Generation is the metadata.generation the manifest names, 0 when it
	// names none. It is not in JSON: whoever publishes the object owns its
	// generation (the file provider counts its own); Resource uses it, so
	// that a test can say at which generation an object is.
	Generation int64
}

// Problem is a manifest that cannot be used, located by path and line.
type Problem struct {
	Path string
	// Line is 1-based; 0 when the problem is with the file as a whole.
	Line    int
	Message string
	// Refused is set when the object decoded but the API server would
	// refuse it (see Options.KeepRefused).
	Refused bool
}

// Options change what Decode returns.
type Options struct {
	// KeepRefused returns the objects the API server would refuse too,
	// defaulted, beside their problems (marked Refused). It is for tests
	// of what a reader of the bus does with such objects, which a cluster
	// with older schemas, or a writer other than gatewire, may publish;
	// the provider and gatewire translate never publish them.
	KeepRefused bool
	// MaxBytes is the size limit of ReadResourcesWith's input; 0 is
	// DefaultMaxBytes.
	MaxBytes int64
}

// Error returns "<path>:<line>: <message>".
func (p Problem) Error() string {
	if p.Line == 0 {
		return p.Path + ": " + p.Message
	}
	return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message)
}

// Decode reads every object of the manifest data, read from path. It returns
// the objects in document order and every problem found; a caller that wants
// all or nothing uses the objects only when there is no problem. Empty
// documents (only comments, or nothing between two "---") are skipped. The
// documents are decoded and checked in parallel, on up to GOMAXPROCS
// goroutines that are gone when Decode returns.
func Decode(path string, data []byte) ([]Object, []Problem) {
	return DecodeWith(path, data, Options{})
}

// DecodeWith is Decode with options.
func DecodeWith(path string, data []byte, o Options) ([]Object, []Problem) {
	if objects, ok := decodeFast(path, data, o); ok {
		return objects, nil
	}
	return decodeNodes(path, data, o)
}

// decodeNodes is DecodeWith over go-yaml's nodes, for every manifest.
func decodeNodes(path string, data []byte, o Options) ([]Object, []Problem) {
	docs, err := documents(data)
	var syntax []Problem
	if err != nil {
		line, msg := syntaxError(err)
		syntax = append(syntax, Problem{Path: path, Line: line, Message: msg})
	}
	decoded := make([]decoder, len(docs))
	Parallel(len(docs), func(i int) {
		decoded[i].path, decoded[i].keepRefused = path, o.KeepRefused
		decoded[i].document(docs[i])
	})
	var objects []Object
	var problems []Problem
	for _, d := range decoded {
		objects, problems = append(objects, d.objects...), append(problems, d.problems...)
	}
	return objects, append(problems, syntax...)
}

// documents returns the node of each document of data that is not empty
// or null, up to the first syntax error, and that error.
func documents(data []byte) ([]*yaml.Node, error) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		if len(doc.Content) > 0 && !isNull(doc.Content[0]) {
			docs = append(docs, doc.Content[0])
		}
	}
}

// decodeFast decodes a manifest parseFast reads, and reports false when it
// does not read it or one of its objects has a problem: then go-yaml's
// nodes place the problems at their lines. A List is left to go-yaml too.
func decodeFast(path string, data []byte, o Options) ([]Object, bool) {
	docs, ok := parseFast(data)
	if !ok {
		return nil, false
	}
	for _, doc := range docs {
		if doc.value["apiVersion"] == "v1" && doc.value["kind"] == "List" {
			return nil, false
		}
	}
	decoded := make([]decoder, len(docs))
	Parallel(len(docs), func(i int) {
		decoded[i].path, decoded[i].keepRefused = path, o.KeepRefused
		raw, err := EncodeJSON(docs[i].value)
		if err != nil {
			decoded[i].problem(docs[i].line, "%v", err)
			return
		}
		decoded[i].checked(nil, docs[i].line, raw, docs[i].value)
	})
	var objects []Object
	for _, d := range decoded {
		if len(d.problems) > 0 {
			return nil, false
		}
		objects = append(objects, d.objects...)
	}
	return objects, true
}

// Parallel calls fn(0) to fn(n-1) on up to GOMAXPROCS goroutines and returns
// when every call has returned: how the package decodes documents, and how
// its callers may read, decode or print many files.
func Parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// decoder collects the objects and problems of one manifest.
type decoder struct {
	path        string
	keepRefused bool
	objects     []Object
	problems    []Problem
}

func (d *decoder) problem(line int, format string, args ...any) {
	d.problems = append(d.problems, Problem{Path: d.path, Line: line, Message: fmt.Sprintf(format, args...)})
}

// document decodes one document: an object or a v1 List of objects.
func (d *decoder) document(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		d.problem(n.Line, "document is not an object (a YAML mapping)")
		return
	}
	if dup := duplicateKeys(n); len(dup) > 0 {
		for _, k := range dup {
			d.problem(k.Line, "duplicate key %q", k.Value)
		}
		return
	}
	if scalarValue(n, "apiVersion") == "v1" && scalarValue(n, "kind") == "List" {
		items := mapValue(n, "items")
		if items == nil || items.Kind != yaml.SequenceNode {
			d.problem(n.Line, "List has no items sequence")
			return
		}
		for _, item := range items.Content {
			if item.Kind != yaml.MappingNode {
				d.problem(item.Line, "List item is not an object (a YAML mapping)")
				continue
			}
			d.object(item)
		}
		return
	}
	d.object(n)
}

// object decodes, checks and normalizes one object.
func (d *decoder) object(n *yaml.Node) {
	raw, obj, err := nodeJSON(n)
	if err != nil {
		d.problem(n.Line, "%v", err)
		return
	}
	if obj == nil {
		if err := unmarshal(raw, &obj); err != nil {
			d.problem(n.Line, "%v", err)
			return
		}
	}
	d.checked(n, n.Line, raw, obj)
}

// checked checks the object obj, raw in JSON, whose document starts on
// line, and keeps it when it passes. n is its node, which places problems
// at their lines; nil for a document of decodeFast, whose problems are
// placed again by go-yaml's nodes.
func (d *decoder) checked(n *yaml.Node, line int, raw []byte, obj map[string]any) {
	kind, ok := d.header(n, obj)
	if !ok {
		return
	}
	name := nestedString(obj, "metadata", "name")
	if !d.strict(n, kind, name, raw) || !d.valid(n, kind, name, obj) {
		return
	}
	generation, _ := nested(obj, "metadata", "generation").(int64)
	normalize(obj, kind)
	out, err := EncodeJSON(obj)
	if err != nil {
		d.problem(line, "%s %q: %v", kind.Kind, name, err)
		return
	}
	// The names are cloned: parseFast's strings share the manifest's text,
	// which an Object must not keep alive.
	d.objects = append(d.objects, Object{
		Kind: kind, Namespace: strings.Clone(nestedString(obj, "metadata", "namespace")), Name: strings.Clone(name),
		Path: d.path, Line: line, JSON: out, Generation: generation,
	})
}

// valid defaults obj and checks it as the API server would on create
// (package validate), and reports each field error at its field's line. It
// reports true when the object is valid.
func (d *decoder) valid(n *yaml.Node, kind Kind, name string, obj map[string]any) bool {
	errs := validate.Object(obj)
	if ns := nestedString(obj, "metadata", "namespace"); kind.Namespaced {
		name = cmp.Or(ns, "default") + "/" + name
	}
	for _, e := range errs {
		msg := e.Error()
		if e.Field == "<nil>" { // a note on the object as a whole
			msg = e.Detail
		}
		d.problem(lineOf(n, e.Field), "%s %s: %s", kind.Kind, name, msg)
		d.problems[len(d.problems)-1].Refused = true
	}
	return len(errs) == 0 || d.keepRefused
}

// header checks apiVersion, kind and metadata.name and returns the Kind.
func (d *decoder) header(n *yaml.Node, obj map[string]any) (Kind, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kindName, _ := obj["kind"].(string)
	name := nestedString(obj, "metadata", "name")
	switch {
	case apiVersion == "":
		d.problem(lineOf(n, ""), "missing apiVersion (a string)")
		return Kind{}, false
	case kindName == "":
		d.problem(lineOf(n, ""), "missing kind (a string)")
		return Kind{}, false
	}
	kind, ok := kinds[kindName]
	if !ok {
		d.problem(lineOf(n, "kind"), "unknown kind %q (apiVersion %q); known kinds: %s",
			kindName, apiVersion, strings.Join(kindNames(), ", "))
		return Kind{}, false
	}
	group, version := splitAPIVersion(apiVersion)
	if group != kind.Group || !kind.accepted(version) {
		d.problem(lineOf(n, "apiVersion"), "%s: apiVersion %q is not served; served: %s",
			objectName(kind, obj), apiVersion, strings.Join(kind.acceptedAPIVersions(), ", "))
		return Kind{}, false
	}
	if name == "" {
		d.problem(lineOf(n, ""), "%s without metadata.name (a string)", kindName)
		return Kind{}, false
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		d.problem(lineOf(n, "metadata.name"), "%s metadata.name %q: %s", kindName, name, strings.Join(errs, "; "))
		return Kind{}, false
	}
	ns := nestedString(obj, "metadata", "namespace")
	if errs := validation.IsDNS1123Label(ns); ns != "" && kind.Namespaced && len(errs) > 0 {
		d.problem(lineOf(n, "metadata.namespace"), "%s metadata.namespace %q: %s", kindName, ns, strings.Join(errs, "; "))
		return Kind{}, false
	}
	return kind, true
}

// objectName names an object in a problem: "<kind> <namespace>/<name>",
// the namespace "default" when it names none, or "<kind> <name>" for a
// cluster-scoped kind.
func objectName(kind Kind, obj map[string]any) string {
	name := nestedString(obj, "metadata", "name")
	if kind.Namespaced {
		name = cmp.Or(nestedString(obj, "metadata", "namespace"), "default") + "/" + name
	}
	return kind.Kind + " " + name
}

// normalize applies the rules of the package doc to obj.
func normalize(obj map[string]any, kind Kind) {
	obj["apiVersion"] = kind.APIVersion()
	delete(obj, "status")
	meta, _ := obj["metadata"].(map[string]any)
	delete(meta, "managedFields")
	delete(meta, "generation")
	delete(meta, "resourceVersion")
	ns, _ := meta["namespace"].(string)
	switch {
	case !kind.Namespaced:
		delete(meta, "namespace")
		ns = ""
	case ns == "":
		ns = "default"
		meta["namespace"] = ns
	}
	if uid, _ := meta["uid"].(string); uid == "" {
		meta["uid"] = UID(kind.Kind, ns, nestedString(obj, "metadata", "name"))
	}
	if ts, _ := meta["creationTimestamp"].(string); ts == "" {
		meta["creationTimestamp"] = Epoch
	}
}

// nodeJSON converts a YAML node to JSON the way kubectl does (YAML 1.1
// scalars: yes/no are booleans). When the node is a mapping that fastJSON
// converts, it also returns the object as unmarshal would decode the JSON
// (integers as int64), which the caller then owns; otherwise nil.
func nodeJSON(n *yaml.Node) ([]byte, map[string]any, error) {
	if b, v, ok := fastJSON(n); ok {
		obj, _ := v.(map[string]any)
		return b, obj, nil
	}
	b, err := slowJSON(n)
	return b, nil, err
}

// slowJSON is nodeJSON for every node: the node marshalled to YAML and
// converted by sigs.k8s.io/yaml, as kubectl reads a file.
func slowJSON(n *yaml.Node) ([]byte, error) {
	y, err := yaml.Marshal(n)
	if err != nil {
		return nil, err
	}
	return sigsyaml.YAMLToJSON(y)
}

func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// nestedString returns obj[k1][k2]... when it is a string.
func nestedString(obj map[string]any, keys ...string) string {
	s, _ := nested(obj, keys...).(string)
	return s
}

// nested returns obj[k1][k2]..., nil when there is none.
func nested(obj map[string]any, keys ...string) any {
	var cur any = obj
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
