package validate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// TestWriteKey checks that values share a key only when they are equal and
// of the same types, whatever the order of their maps.
func TestWriteKey(t *testing.T) {
	key := func(v any) string {
		var b strings.Builder
		if !writeKey(&b, v) {
			return "<none>"
		}
		return b.String()
	}
	distinct := []any{
		nil, true, false, int64(1), float64(1), "1", "true", "", []any{}, map[string]any{},
		[]any{int64(1)}, []any{int64(1), int64(2)}, []any{[]any{int64(1)}, int64(2)}, []any{int64(1), []any{int64(2)}},
		map[string]any{"a": int64(1)}, map[string]any{"a": float64(1)}, map[string]any{"a,": "b"}, map[string]any{"a": ",b"},
		map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": []any{"b", "c"}}, []any{"a\"", "b"}, []any{"a", "\"b"},
	}
	seen := map[string]int{}
	for i, v := range distinct {
		k := key(v)
		if j, ok := seen[k]; ok {
			t.Errorf("%#v and %#v share the key %q", distinct[j], v, k)
		}
		seen[k] = i
	}
	a := map[string]any{"x": int64(1), "y": []any{"p", map[string]any{"q": true, "r": nil}}, "z": "s"}
	b := map[string]any{"z": "s", "y": []any{"p", map[string]any{"r": nil, "q": true}}, "x": int64(1)}
	if key(a) != key(b) {
		t.Errorf("equal maps have keys %q and %q", key(a), key(b))
	}
	for _, v := range []any{strings.Repeat("x", memoMaxKey), []any{int32(1)}, map[string]any{"a": struct{}{}}} {
		if k := key(v); k != "<none>" {
			t.Errorf("%.40q has a key, want none (too long, or a type JSON does not decode to)", k)
		}
	}
}

// TestRuleMemo checks that a node replays what it remembers, stops
// remembering values that do not repeat, and starts over when full.
func TestRuleMemo(t *testing.T) {
	s := compileYAML(t, craftedSchema)
	n, err := compileRules(s.structural, celconfig.PerCallLimit)
	if err != nil {
		t.Fatal(err)
	}
	spec := n.properties["spec"]
	ctx := context.Background()
	check := func(o map[string]any) {
		t.Helper()
		if _, left := n.validate(ctx, nil, o, celconfig.RuntimeCELCostBudget); left < 0 {
			t.Fatalf("budget ran out on %v", o)
		}
	}
	same := object(t, "apiVersion: test/v1\nkind: Crafted\nmetadata: {name: c}\nspec: {a: 1, b: 2, zero: 1, name: ok}")
	for range 10 {
		check(same)
	}
	if spec.memo.lookups != 10 || spec.memo.hits != 9 || len(spec.memo.values) != 1 {
		t.Fatalf("one value 10 times: %d lookups, %d hits, %d values; want 10, 9, 1", spec.memo.lookups, spec.memo.hits, len(spec.memo.values))
	}
	for i := range memoTrial {
		check(object(t, fmt.Sprintf("apiVersion: test/v1\nkind: Crafted\nmetadata: {name: c}\nspec: {a: %d, b: 1000, zero: 1}", i)))
	}
	if !spec.memo.off || spec.memo.values != nil {
		t.Fatalf("after %d values that do not repeat: off %v, %d values held; want off, none", memoTrial, spec.memo.off, len(spec.memo.values))
	}
	labels := spec.properties["labels"].additional // a node whose values repeat, seen many times
	for i := range memoMaxValues + 10 {
		v := fmt.Sprintf("v%d", i%(memoMaxValues+5))
		labels.evaluate(ctx, nil, v, celconfig.RuntimeCELCostBudget)
		labels.evaluate(ctx, nil, v, celconfig.RuntimeCELCostBudget)
	}
	if labels.memo.off || len(labels.memo.values) > memoMaxValues {
		t.Fatalf("label values: off %v, %d values held; want on, at most %d", labels.memo.off, len(labels.memo.values), memoMaxValues)
	}
	long := strings.Repeat("x", 3000) // memoMaxBytes holds about 43 of these
	for i := range 200 {
		v := fmt.Sprintf("%s%d", long, i%100)
		labels.evaluate(ctx, nil, v, celconfig.RuntimeCELCostBudget)
		labels.evaluate(ctx, nil, v, celconfig.RuntimeCELCostBudget)
		if labels.memo.bytes > memoMaxBytes {
			t.Fatalf("%d bytes of keys held, over %d", labels.memo.bytes, memoMaxBytes)
		}
	}
	if labels.memo.bytes == 0 || labels.memo.hits == 0 {
		t.Fatalf("long label values: %d bytes held, %d hits; want some of each", labels.memo.bytes, labels.memo.hits)
	}
}
