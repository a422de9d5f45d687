package resources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"sigs.k8s.io/yaml"
)

// clusterScoped are the kinds that have no namespace; objects of other kinds
// without one are in "default", as kubectl would put them.
var clusterScoped = map[string]bool{KindGatewayClass: true, KindNamespace: true}

// LoadYAML reads multi-document YAML and returns an Index of its objects.
func LoadYAML(r io.Reader, origin string) (*Index, error) {
	resources, err := DecodeYAML(r, origin)
	if err != nil {
		return nil, err
	}
	x := NewIndex()
	for _, res := range resources {
		if _, err := x.Apply(res); err != nil {
			return nil, fmt.Errorf("%s: %w", res.GetOrigin(), err)
		}
	}
	return x, nil
}

// DecodeYAML reads multi-document YAML ("---" separated) and returns one
// Resource per object, as the provider would publish it: status and
// managedFields removed, origin "file:<origin>:<line>". Empty documents are
// skipped; a document that is not a Kubernetes object is an error that names
// its line.
func DecodeYAML(r io.Reader, origin string) ([]*busv1.Resource, error) {
	var out []*busv1.Resource
	err := splitDocuments(r, func(doc []byte, line int) error {
		where := fmt.Sprintf("file:%s:%d", origin, line)
		res, err := decodeDocument(doc)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if res != nil {
			res.Origin = where
			out = append(out, res)
		}
		return nil
	})
	return out, err
}

// splitDocuments calls fn with each document of r and the line it starts on.
func splitDocuments(r io.Reader, fn func(doc []byte, line int) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var doc bytes.Buffer
	start, line := 1, 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "---" || strings.HasPrefix(text, "--- ") {
			if err := fn(doc.Bytes(), start); err != nil {
				return err
			}
			doc.Reset()
			start = line + 1
			continue
		}
		doc.WriteString(text)
		doc.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read yaml: %w", err)
	}
	return fn(doc.Bytes(), start)
}

// object is the part of a Kubernetes object that a Resource repeats.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		UID             string `json:"uid"`
		Generation      int64  `json:"generation"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// decodeDocument turns one YAML document into a Resource; nil when empty.
func decodeDocument(doc []byte) (*busv1.Resource, error) {
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	var obj object
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	if obj.Kind == "" || obj.APIVersion == "" || obj.Metadata.Name == "" {
		return nil, fmt.Errorf("not a Kubernetes object: apiVersion, kind and metadata.name are required")
	}
	if obj.Metadata.Namespace == "" && !clusterScoped[obj.Kind] {
		obj.Metadata.Namespace = "default"
		fields["metadata"].(map[string]any)["namespace"] = "default"
	}
	delete(fields, "status")
	delete(fields["metadata"].(map[string]any), "managedFields")
	stripped, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	group, version, _ := strings.Cut(obj.APIVersion, "/")
	if version == "" { // core objects: apiVersion "v1"
		group, version = "", group
	}
	return &busv1.Resource{
		Group: group, Version: version, Kind: obj.Kind,
		Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name,
		Uid: obj.Metadata.UID, Generation: obj.Metadata.Generation,
		ResourceVersion: obj.Metadata.ResourceVersion, Object: stripped,
	}, nil
}
