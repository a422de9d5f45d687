package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiextcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// craftedSchema has a rule for each way a CEL rule can fail or be skipped:
// messages, message expressions that fail, reasons, field paths, transition
// and optionalOldSelf rules, runtime errors, rules on map values and list
// items, and a rule whose cost grows with its input.
const craftedSchema = `
openAPIV3Schema:
  type: object
  properties:
    spec:
      type: object
      x-kubernetes-validations:
      - {rule: "self.a <= self.b", message: "a must not exceed b"}
      - {rule: "self.a != 3", messageExpression: "'a is ' + string(self.a)"}
      - {rule: "self.a != 4", messageExpression: "''", message: "not four"}
      - {rule: "self.a != 5", messageExpression: "'line\\nbreak'"}
      - {rule: "self.a != 8", messageExpression: "'eight: ' + self.words[0]"}
      - {rule: "!has(self.name) || self.name != 'x'", reason: FieldValueForbidden, fieldPath: ".name"}
      - {rule: "has(self.name)", reason: FieldValueRequired, fieldPath: ".name", message: name is required}
      - {rule: "self.a != 6", reason: FieldValueDuplicate}
      - {rule: "self == oldSelf", message: immutable}
      - {rule: "!oldSelf.hasValue() || oldSelf.value().a == self.a", optionalOldSelf: true}
      - {rule: "oldSelf.hasValue() || self.a != 7", optionalOldSelf: true, message: seven is not new}
      - {rule: "self.a / self.zero >= 0"}
      - {rule: "!has(self.words) || self.words.all(w, self.words.exists(x, x == w))", message: quadratic}
      properties:
        a: {type: integer}
        b: {type: integer}
        zero: {type: integer}
        name: {type: string, maxLength: 10}
        flag: {type: boolean, x-kubernetes-validations: [{rule: "true"}]}
        labels:
          type: object
          additionalProperties:
            type: string
            maxLength: 20
            x-kubernetes-validations: [{rule: "self != 'bad'"}]
        entries:
          type: array
          maxItems: 100
          items:
            type: object
            properties:
              num: {type: integer}
            x-kubernetes-validations: [{rule: "true"}, {rule: "self.num >= 0", message: num must not be negative}]
        words:
          type: array
          maxItems: 50
          items: {type: string, maxLength: 64}
`

// craftedObjects are specs for craftedSchema, each failing some of its rules.
// None has more than one key with rules in a map: when the budget runs out in
// the middle of a map, which keys were checked depends on the order Go
// iterates it in, for the API server as for ruleNode (manyLabels is checked
// with the whole budget only).
var craftedObjects = []string{
	`{a: 1, b: 2, zero: 1, name: ok, flag: true}`,
	`{a: 3, b: 2, zero: 1}`,
	`{a: 4, b: 9, zero: 1, name: x}`,
	`{a: 5, b: 9, zero: 0, name: ok}`,
	`{a: 6, b: 9, zero: 1, name: ok}`,
	`{a: 7, b: 9, zero: 1, name: ok}`,
	`{a: 8, b: 9, zero: 1, name: ok, words: []}`,
	`{a: 8, b: 9, zero: 1, name: ok, words: [w]}`,
	`{a: 1, b: 2, zero: 1, name: ok, labels: {k1: bad}}`,
	`{a: 1, b: 2, zero: 1, name: ok, entries: [{num: 1}, {num: -1}, {num: -2}]}`,
	`{a: 1, b: 2, zero: 1, name: ok, words: ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"]}`,
}

const manyLabels = `{a: 1, b: 2, zero: 1, name: ok, labels: {k1: bad, k2: good, k3: bad}}`

// TestRulesMatchUpstream checks that ruleNode gives the errors, and leaves
// the budget, that the apiextensions-apiserver's cel.Validator gives and
// leaves: on the crafted schema, with every budget from none to what all but the quadratic rule cost, and the API server's,
// and a per-call limit low enough to stop the quadratic rule; and on every
// Gateway API object of the package's tests and of the benchmark.
func TestRulesMatchUpstream(t *testing.T) {
	s := compileYAML(t, craftedSchema)
	var budgets []int64 // every budget up to what all but the quadratic rule cost, up and down
	for b := range int64(200) {
		budgets = append(budgets, b)
	}
	budgets = append(budgets, celconfig.RuntimeCELCostBudget)
	for b := range int64(200) {
		budgets = append(budgets, 199-b)
	}
	for _, limit := range []uint64{celconfig.PerCallLimit, 40} {
		ours, err := compileRules(s.structural, limit)
		if err != nil {
			t.Fatal(err)
		}
		upstream := apiextcel.NewValidator(s.structural, true, limit)
		for i, spec := range craftedObjects {
			obj := object(t, "apiVersion: test/v1\nkind: Crafted\nmetadata: {name: c}\nspec: "+spec)
			// Up, then down: the outcomes a node remembers (rules_memo.go)
			// are replayed with more and with less budget than the
			// evaluation that recorded them had.
			for _, budget := range budgets {
				name := fmt.Sprintf("limit %d, object %d, budget %d", limit, i, budget)
				compareRules(t, name, s.structural, ours, upstream, obj, budget)
			}
		}
		obj := object(t, "apiVersion: test/v1\nkind: Crafted\nmetadata: {name: c}\nspec: "+manyLabels)
		compareRules(t, "many labels", s.structural, ours, upstream, obj, celconfig.RuntimeCELCostBudget)
	}

	checked := 0
	for _, tc := range testObjects(20) {
		obj := object(t, tc.in)
		kind, _ := obj["kind"].(string)
		group, version := splitAPIVersion(obj["apiVersion"].(string))
		if crds[kind] == nil || group != GatewayGroup {
			continue
		}
		s, err := crds[kind].schema(version)
		if err != nil {
			t.Fatal(err)
		}
		Object(obj) // defaults obj, as before the rules run
		upstream := apiextcel.NewValidator(s.structural, true, celconfig.PerCallLimit)
		compareRules(t, tc.name, s.structural, s.rules, upstream, obj, celconfig.RuntimeCELCostBudget)
		checked++
	}
	if checked < 30 {
		t.Fatalf("only %d Gateway API objects checked", checked)
	}
}

func compareRules(t *testing.T, name string, s *structuralschema.Structural, ours *ruleNode, upstream *apiextcel.Validator, obj map[string]any, budget int64) {
	t.Helper()
	ctx := context.Background()
	want, wantLeft := upstream.Validate(ctx, nil, s, obj, nil, budget)
	got, gotLeft := ours.validate(ctx, nil, obj, budget)
	if w, g := sortedErrors(want), sortedErrors(got); !slices.Equal(w, g) || wantLeft != gotLeft {
		t.Errorf("%s: upstream gives (budget left %d)\n%s\nruleNode gives (budget left %d)\n%s",
			name, wantLeft, strings.Join(w, "\n"), gotLeft, strings.Join(g, "\n"))
	}
}

func sortedErrors(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Error()
	}
	slices.Sort(out)
	return out
}

// TestRulesUnderAllOf checks that a schema with rules compileRules would
// not evaluate is refused, naming where they are.
func TestRulesUnderAllOf(t *testing.T) {
	var def apiextensionsv1.CustomResourceValidation
	if err := yaml.Unmarshal([]byte(`
openAPIV3Schema:
  type: object
  properties:
    spec:
      type: object
      properties: {a: {type: integer}}
      allOf: [{x-kubernetes-validations: [{rule: "self.a > 0"}]}]`), &def); err != nil {
		t.Fatal(err)
	}
	_, err := compile(&def)
	if err == nil || !strings.Contains(err.Error(), "openAPIV3Schema.properties[spec].allOf[0]") {
		t.Fatalf("got %v, want an error naming openAPIV3Schema.properties[spec].allOf[0]", err)
	}
}

// TestEveryRuleCompiles compiles every CEL rule of every served version of
// every Gateway API kind, which validation compiles only when a schema node
// first sees a value.
func TestEveryRuleCompiles(t *testing.T) {
	rules := 0
	for _, kind := range GatewayKinds() {
		c := crds[kind]
		if err := c.load(); err != nil {
			t.Fatal(err)
		}
		for name := range c.versions {
			s, err := c.schema(name)
			if err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			if err := s.rules.compileAll(field.NewPath("openAPIV3Schema")); err != nil {
				t.Errorf("%s %s: %v", kind, name, err)
			}
			rules += s.rules.count()
		}
	}
	if rules < 100 {
		t.Errorf("%d rules compiled, want the Gateway API's hundreds", rules)
	}
	t.Logf("%d rules compiled", rules)
}

// count returns the number of rules of n and of the nodes under it.
func (n *ruleNode) count() int {
	if n == nil {
		return 0
	}
	c := len(n.rules) + n.items.count() + n.additional.count()
	for _, p := range n.properties {
		c += p.count()
	}
	return c
}

// TestRulesCompileOnFirstUse checks that building a schema compiles no CEL
// rule, and that validating compiles the rules of the nodes the object
// reaches only.
func TestRulesCompileOnFirstUse(t *testing.T) {
	s := compileYAML(t, craftedSchema)
	spec := s.rules.properties["spec"]
	if spec == nil || spec.pending == nil || spec.compiled != nil {
		t.Fatalf("spec's rules compiled before use: %+v", spec)
	}
	untouched := 0
	for name, p := range spec.properties {
		if _, ok := map[string]bool{"a": true, "b": true}[name]; !ok && len(p.rules) > 0 {
			untouched++
		}
	}
	if untouched == 0 {
		t.Fatal("the crafted schema has no rules beside spec's own and a's and b's")
	}
	obj := map[string]any{"apiVersion": "x/v1", "kind": "K", "metadata": map[string]any{"name": "n"}, "spec": map[string]any{"a": int64(1), "b": int64(2)}}
	s.rules.validate(context.Background(), nil, obj, celconfig.RuntimeCELCostBudget)
	if spec.pending != nil || len(spec.compiled) != len(spec.rules) {
		t.Errorf("spec's rules not compiled by a validation: %d of %d", len(spec.compiled), len(spec.rules))
	}
	for name, p := range spec.properties {
		if _, ok := obj["spec"].(map[string]any)[name]; !ok && len(p.rules) > 0 && p.pending == nil {
			t.Errorf("spec.%s's rules compiled without a value", name)
		}
	}
}
