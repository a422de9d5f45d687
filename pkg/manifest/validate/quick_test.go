package validate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
)

// TestQuickSchemaIsSound checks that quickSchema never calls valid what
// kube-openapi's validator refuses: on every Gateway API object of the
// package's tests, of the benchmark and of the translator's golden inputs,
// and on thousands of mutants of them, each with one value replaced by one
// that breaks a type, a length, an enum, a pattern, a bound, a count or a
// required field. It also checks that the quick check does its job: it
// says valid for every valid object whose schema it can decide.
func TestQuickSchemaIsSound(t *testing.T) {
	type doc struct {
		name, in string
		golden   bool
	}
	var docs []doc
	for _, o := range testObjects(3) {
		docs = append(docs, doc{o.name, o.in, false})
	}
	files, err := filepath.Glob("../../../services/translator/testdata/*/*.in.yaml")
	if err != nil || len(files) < 50 {
		t.Fatalf("the translator's golden inputs: %d files, %v", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range strings.Split(string(data), "\n---") {
			if strings.Contains(d, "kind:") {
				docs = append(docs, doc{fmt.Sprintf("%s#%d", filepath.Base(f), i), d, true})
			}
		}
	}

	var objects, mutants, quickValid, valid int
	for _, doc := range docs {
		obj := object(t, doc.in)
		kind, _ := obj["kind"].(string)
		apiVersion, _ := obj["apiVersion"].(string)
		group, version := splitAPIVersion(apiVersion)
		if crds[kind] == nil || group != GatewayGroup {
			continue
		}
		s, err := crds[kind].schema(version)
		if err != nil {
			t.Fatal(err)
		}
		Object(obj) // pruned and defaulted, as the check sees it
		objects++
		ok := s.quick.check(obj)
		errs := apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI)
		if ok && len(errs) > 0 {
			t.Errorf("%s: quick check says valid, kube-openapi says %v", doc.name, errs)
		}
		if !ok && len(errs) == 0 && !strings.Contains(doc.in, "addresses:") {
			t.Errorf("%s: valid, but the quick check is not sure", doc.name)
		}
		all := mutate(obj, "")
		keys := slices.Sorted(maps.Keys(all))
		if stride := len(keys)/40 + 1; doc.golden && stride > 1 {
			// A sample of each golden input's mutants, spread over the
			// object, for time: they are many, and much alike.
			var sample []string
			for i := 0; i < len(keys); i += stride {
				sample = append(sample, keys[i])
			}
			keys = sample
		}
		for _, desc := range keys {
			m := all[desc]
			mutants++
			ok := s.quick.check(m)
			errs := apiservervalidation.ValidateCustomResource(nil, m, s.openAPI)
			if ok && len(errs) > 0 {
				t.Errorf("%s with %s: quick check says valid, kube-openapi says %v", doc.name, desc, errs)
			}
			if ok {
				quickValid++
			}
			if len(errs) == 0 {
				valid++
			}
		}
	}
	t.Logf("%d objects, %d mutants: %d valid, %d of them found valid by the quick check", objects, mutants, valid, quickValid)
	if objects < 150 || mutants < 15000 || quickValid < valid/2 || valid == mutants {
		t.Fatalf("too little checked: %d objects, %d mutants, %d valid, %d found valid quickly", objects, mutants, valid, quickValid)
	}
}

// mutate returns copies of v, each with one change at or under path, keyed
// by a description of the change.
func mutate(v any, path string) map[string]any {
	out := map[string]any{}
	add := func(desc string, m any) { out[path+": "+desc] = m }
	switch v := v.(type) {
	case string:
		for _, s := range []string{"", "Bogus-Value!", strings.ToUpper(v), strings.ToLower(v), v + "x", "1.2.3.4", "::1",
			"/" + v, "*." + v, strings.Repeat("a", 254), strings.Repeat("b", 1025), strings.Repeat("é", 64), "2026-12-03T10:00:00Z"} {
			add(fmt.Sprintf("%q", s), s)
		}
		add("number", int64(1))
		add("float", 1.5)
		add("null", nil)
		add("bool", true)
	case int64:
		for _, n := range []int64{0, -1, 1, v + 1, v - 1, 65535, 65536, 1 << 31, -1 << 31, 1 << 40, 1000000} {
			add(fmt.Sprint(n), n)
		}
		add("integral float", float64(v))
		add("float", float64(v)+0.5)
		add("string", fmt.Sprint(v))
	case bool:
		add("negated", !v)
		add("string", fmt.Sprint(v))
		add("number", int64(1))
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c := maps.Clone(v)
			delete(c, k)
			add("without "+k, c)
			for desc, m := range mutate(v[k], path+"."+k) {
				c := maps.Clone(v)
				c[k] = m
				out[desc] = c
			}
		}
		c := maps.Clone(v)
		c["unknownField"] = "x"
		add("with an unknown field", c)
		add("empty", map[string]any{})
		add("string", "x")
		add("list", []any{v})
	case []any:
		for i, e := range v {
			for desc, m := range mutate(e, fmt.Sprintf("%s[%d]", path, i)) {
				c := slices.Clone(v)
				c[i] = m
				out[desc] = c
			}
		}
		add("empty", []any{})
		if len(v) > 0 {
			add("last twice", append(slices.Clone(v), v[len(v)-1]))
			long := slices.Clone(v)
			for len(long) < 70 {
				long = append(long, v[len(v)-1])
			}
			add("long", long)
			add("without the first", slices.Clone(v[1:]))
		}
		add("object", map[string]any{"x": v})
	}
	return out
}

// quickCraftedSchema has what the Gateway API schemas have too little of for
// TestQuickSchemaIsSound's mutants to reach: an int32 without bounds,
// exclusive bounds, property counts, integer enums, allOf and anyOf, and
// constructs the quick check leaves to kube-openapi.
const quickCraftedSchema = `
openAPIV3Schema:
  type: object
  properties:
    spec:
      type: object
      required: [count]
      properties:
        count: {type: integer, format: int32}
        open: {type: integer, minimum: 1, maximum: 10, exclusiveMinimum: true, exclusiveMaximum: true}
        code: {type: integer, enum: [301, 302]}
        labels: {type: object, maxProperties: 2, minProperties: 1, additionalProperties: {type: string, maxLength: 3}}
        both: {type: string, allOf: [{minLength: 2}, {maxLength: 4}]}
        either: {type: string, anyOf: [{format: ipv4}, {format: ipv6}]}
        one: {type: string, oneOf: [{minLength: 5}, {maxLength: 4}]}
        unique: {type: array, uniqueItems: true, items: {type: string}}
        ratio: {type: number}
`

var quickCraftedObjects = []string{
	`{count: 1}`,
	`{count: 7, open: 9, code: 302, labels: {a: abc, b: x}, both: abc, either: "10.0.0.1"}`,
	`{count: 7, open: 2, code: 301, labels: {a: abc}, both: abcd, either: "::1"}`,
	`{count: 7, one: abc}`,
	`{count: 7, unique: [a, b]}`,
	`{count: 7, ratio: 0.5}`,
}

// TestQuickSchemaCrafted checks quickSchema against kube-openapi on the
// mutants of objects of quickCraftedSchema.
func TestQuickSchemaCrafted(t *testing.T) {
	s := compileYAML(t, quickCraftedSchema)
	var quickValid, valid int
	for i, spec := range quickCraftedObjects {
		obj := object(t, "apiVersion: test/v1\nkind: Crafted\nmetadata: {name: c}\nspec: "+spec)
		if errs := apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI); len(errs) > 0 {
			t.Fatalf("object %d: %v", i, errs)
		}
		if ok, want := s.quick.check(obj), i < 3; ok != want {
			t.Errorf("object %d: quick check %v, want %v", i, ok, want)
		}
		for desc, m := range mutate(obj, "") {
			ok := s.quick.check(m)
			errs := apiservervalidation.ValidateCustomResource(nil, m, s.openAPI)
			if ok && len(errs) > 0 {
				t.Errorf("object %d with %s: quick check says valid, kube-openapi says %v", i, desc, errs)
			}
			if ok {
				quickValid++
			}
			if len(errs) == 0 {
				valid++
			}
		}
	}
	t.Logf("%d valid mutants, %d of them found valid by the quick check", valid, quickValid)
}
