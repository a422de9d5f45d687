package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"
)

// jsonToYAML returns the JSON value j as YAML, as translate, tap and
// config-dump print it: byte for byte what sigs.k8s.io/yaml's JSONToYAML
// returns. JSONToYAML parses the JSON with go-yaml's YAML parser and
// marshals the value with go-yaml v2; this parses it with encoding/json and
// writes it with fastYAML, which gives go-yaml v2's bytes (go-yaml itself
// marshals what fastYAML declines). Numbers get the Go types go-yaml would
// resolve them to (integers as int64 or uint64, others as float64), so they
// print the same.
func jsonToYAML(j []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("JSON to YAML: data after the value")
	}
	v = resolveNumbers(v)
	if out, ok := fastYAML(v); ok {
		return out, nil
	}
	return yamlv2.Marshal(v)
}

// resolveNumbers replaces, in place, every json.Number of v with the int64,
// uint64 or float64 go-yaml would decode it as.
func resolveNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if i, e := strconv.ParseInt(s, 0, 64); e == nil {
			return i
		}
		if u, e := strconv.ParseUint(s, 0, 64); e == nil {
			return u
		}
		if f, e := strconv.ParseFloat(s, 64); e == nil {
			return f
		}
		return s // out of float64's range: go-yaml keeps it as a string
	case map[string]any:
		for k, e := range v {
			v[k] = resolveNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = resolveNumbers(e)
		}
	}
	return v
}
