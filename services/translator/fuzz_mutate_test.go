package translator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// mutator changes Gateway API objects as a fuzzer's bytes say: it inserts
// pieces of HTTPRoute (matches, filters, backendRefs, timeouts, retries)
// and replaces, deletes or repeats any value, so that every field meets
// strings, numbers and shapes the API server would have refused.
type mutator struct {
	ops []byte
}

func (m *mutator) byte() byte {
	if len(m.ops) == 0 {
		return 0
	}
	b := m.ops[0]
	m.ops = m.ops[1:]
	return b
}

func (m *mutator) intn(n int) int { return (int(m.byte())<<8 | int(m.byte())) % n }

// str returns a string of the fuzzer's bytes, or one of a few meaningful
// values.
func (m *mutator) str() string {
	if n := int(m.byte()); n < 64 {
		k := min(n%32, len(m.ops))
		s := string(m.ops[:k])
		m.ops = m.ops[k:]
		return s
	}
	return interesting[m.intn(len(interesting))]
}

// interesting are values that meet the edge cases of Gateway API fields.
var interesting = []string{
	"", "/", "//", "/a/", "/a?b", "/a#b", "/%2f", "/.", "*", "*.example.com", "example.com", ".",
	"a..b", "http", "https", "ftp", "https://*.a.com", "http://a.com:8080", "x\r\ny", "\x00", "\xff",
	"(", "[a-", ".*", "(?P<a>x)(?P<a>y)", "^[a-f0-9]{64}$", "a{1001}", "0s", "1h", "1.5s", "-1s",
	"99999h99999h99999h99999h", "Host", ":path", "GET", "FETCH", "ReplaceFullPath",
	"ReplacePrefixMatch", "Exact", "PathPrefix", "RegularExpression", "RequestRedirect", "URLRewrite",
	"CORS", "ExtensionRef", "RequestMirror", "Service", "example.com/Thing", "other",
}

// snippets are pieces of an HTTPRoute rule the mutator inserts, by the
// field of a rule that holds them.
var snippets = map[string][]string{
	"matches": {
		`{"path":{"type":"RegularExpression","value":"^/r/[0-9]+"}}`,
		`{"path":{"type":"Exact","value":"/e"},"method":"POST"}`,
		`{"headers":[{"name":"x-h","value":"v"},{"type":"RegularExpression","name":"x-r","value":"v.*"}]}`,
		`{"queryParams":[{"name":"q","value":"v"},{"type":"RegularExpression","name":"r","value":"[a-z]+"}]}`,
	},
	"filters": {
		`{"type":"RequestHeaderModifier","requestHeaderModifier":{"set":[{"name":"x-s","value":"v"}],"add":[{"name":"x-a","value":"v"}],"remove":["x-r"]}}`,
		`{"type":"ResponseHeaderModifier","responseHeaderModifier":{"set":[{"name":"x-s","value":"v"}]}}`,
		`{"type":"RequestRedirect","requestRedirect":{"scheme":"https","hostname":"a.example.com","port":8443,"statusCode":301,"path":{"type":"ReplacePrefixMatch","replacePrefixMatch":"/"}}}`,
		`{"type":"URLRewrite","urlRewrite":{"hostname":"b.example.com","path":{"type":"ReplaceFullPath","replaceFullPath":"/full"}}}`,
		`{"type":"URLRewrite","urlRewrite":{"path":{"type":"ReplacePrefixMatch","replacePrefixMatch":""}}}`,
		`{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"app","port":80},"percent":30}}`,
		`{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"app","port":80},"fraction":{"numerator":1,"denominator":3}}}`,
		`{"type":"CORS","cors":{"allowOrigins":["https://*.a.com","http://b.com"],"allowMethods":["GET"],"allowHeaders":["x-a"],"exposeHeaders":["x-b"],"maxAge":10,"allowCredentials":true}}`,
		`{"type":"ExtensionRef","extensionRef":{"group":"example.com","kind":"Thing","name":"t"}}`,
	},
	"backendRefs": {
		`{"name":"app","port":80,"weight":3}`,
		`{"name":"app","port":80,"filters":[{"type":"RequestHeaderModifier","requestHeaderModifier":{"set":[{"name":"x-b","value":"v"}]}}]}`,
		`{"name":"missing","namespace":"other","port":80}`,
		`{"group":"example.com","kind":"Thing","name":"app"}`,
	},
	"timeouts": {`{"request":"10s","backendRequest":"1s"}`, `{"request":"0s"}`},
	"retry":    {`{"attempts":2,"codes":[500,503],"backoff":"100ms"}`, `{}`},
	"name":     {`"rule-name"`},
}

// maxOperations bounds the operations of one input, and maxRouteSize the
// JSON of a route they work on, so that one input stays quick to run.
const (
	maxOperations = 64
	maxRouteSize  = 32 << 10
)

// mutate applies the mutator's operations to the HTTPRoutes of objects. A
// route that no longer decodes is left as it is.
func (m *mutator) mutate(objects []*busv1.Resource) {
	var routes []*busv1.Resource
	for _, o := range objects {
		if o.GetKind() == "HTTPRoute" {
			routes = append(routes, o)
		}
	}
	for n := 0; n < maxOperations && len(routes) > 0 && len(m.ops) > 0; n++ {
		r := routes[m.intn(len(routes))]
		if len(r.Object) > maxRouteSize {
			return
		}
		var doc any
		if json.Unmarshal(r.Object, &doc) != nil {
			return
		}
		switch m.byte() % 4 {
		case 0:
			m.insert(doc)
		case 1:
			m.replace(doc)
		case 2:
			m.remove(doc)
		default:
			m.repeat(doc)
		}
		if b, err := json.Marshal(doc); err == nil {
			r.Object = b
		}
	}
}

// insert adds a snippet to a rule of the route, or a new rule.
func (m *mutator) insert(doc any) {
	spec, _ := doc.(map[string]any)["spec"].(map[string]any)
	if spec == nil {
		return
	}
	rules, _ := spec["rules"].([]any)
	if len(rules) == 0 || m.byte()%8 == 0 {
		spec["rules"] = append(rules, map[string]any{})
		return
	}
	rule, _ := rules[m.intn(len(rules))].(map[string]any)
	if rule == nil {
		return
	}
	fields := slices.Sorted(func(yield func(string) bool) {
		for k := range snippets {
			if !yield(k) {
				return
			}
		}
	})
	field := fields[m.intn(len(fields))]
	var v any
	if json.Unmarshal([]byte(snippets[field][m.intn(len(snippets[field]))]), &v) != nil {
		return
	}
	switch old := rule[field].(type) {
	case []any:
		rule[field] = append(old, v)
	default:
		if _, object := v.(map[string]any); object && field != "timeouts" && field != "retry" {
			v = []any{v} // an element of a list field
		}
		rule[field] = v
	}
}

// leaf is a place in a JSON document: a container and a key in it.
type leaf struct {
	container any // map[string]any or []any
	key       string
	index     int
}

// leaves lists every place of doc, in a stable order.
func leaves(doc any, out []leaf) []leaf {
	switch d := doc.(type) {
	case map[string]any:
		keys := make([]string, 0, len(d))
		for k := range d {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, leaf{container: d, key: k})
			out = leaves(d[k], out)
		}
	case []any:
		for i := range d {
			out = append(out, leaf{container: d, index: i})
			out = leaves(d[i], out)
		}
	}
	return out
}

// replace sets a value of the spec to another, mostly of the same JSON type
// (so that the object still decodes), sometimes of another.
func (m *mutator) replace(doc any) {
	places := specLeaves(doc)
	if len(places) == 0 {
		return
	}
	p := places[m.intn(len(places))]
	var old any
	switch c := p.container.(type) {
	case map[string]any:
		old = c[p.key]
	case []any:
		old = c[p.index]
	}
	var v any
	switch old.(type) {
	case map[string]any, []any:
		return
	case string:
		v = m.str()
	case bool:
		v = m.byte()%2 == 0
	default:
		v = float64(int64(m.intn(1<<16)) - 1<<8)
	}
	if m.byte()%16 == 0 { // a value of another type
		v = []any{m.str(), m.byte()%2 == 0, float64(m.byte())}[m.byte()%3]
	}
	switch c := p.container.(type) {
	case map[string]any:
		c[p.key] = v
	case []any:
		c[p.index] = v
	}
}

// remove deletes a key of a map in the spec.
func (m *mutator) remove(doc any) {
	places := specLeaves(doc)
	if len(places) == 0 {
		return
	}
	if p := places[m.intn(len(places))]; p.key != "" {
		delete(p.container.(map[string]any), p.key)
	}
}

// repeat appends a copy of an element of a list in the spec to it.
func (m *mutator) repeat(doc any) {
	spec, _ := doc.(map[string]any)["spec"].(map[string]any)
	for _, p := range leaves(spec, nil) {
		c, ok := p.container.(map[string]any)
		if !ok {
			continue
		}
		if l, ok := c[p.key].([]any); ok && len(l) > 0 && m.byte()%3 == 0 {
			c[p.key] = append(l, l[len(l)-1])
			return
		}
	}
}

// specLeaves are the places of a document's spec.
func specLeaves(doc any) []leaf {
	top, _ := doc.(map[string]any)
	if top == nil {
		return nil
	}
	return leaves(top["spec"], nil)
}

func describe(objects []*busv1.Resource) string {
	var b strings.Builder
	for _, o := range objects {
		fmt.Fprintf(&b, "%s %s/%s: %s\n", o.GetKind(), o.GetNamespace(), o.GetName(), o.GetObject())
	}
	return b.String()
}
