package gatewayapi

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestMergeStatuses checks mergeStatuses against a stable sort of both
// lists, on random lists with equal statuses in both (a's come first).
func TestMergeStatuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	status := func(list string, k int) *busv1.Status {
		name := fmt.Sprintf("r%02d", rng.IntN(20))
		return &busv1.Status{Object: &busv1.ObjectRef{Kind: "HTTPRoute", Namespace: "ns", Name: name}, ObservedGeneration: int64(k), Gateway: &busv1.ObjectRef{Name: list}}
	}
	for round := range 200 {
		var a, b []*busv1.Status
		for k := range rng.IntN(30) {
			a = append(a, status("a", k))
		}
		for k := range rng.IntN(5) {
			b = append(b, status("b", k))
		}
		slices.SortStableFunc(a, compareStatus)
		slices.SortStableFunc(b, compareStatus)
		want := slices.Concat(a, b)
		slices.SortStableFunc(want, compareStatus)
		got := mergeStatuses(nil, a, b)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: merged %v, want %v", round, statusNames(got), statusNames(want))
		}
	}
}

func statusNames(ss []*busv1.Status) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s/%s#%d", s.GetObject().GetName(), s.GetGateway().GetName(), s.GetObservedGeneration()))
	}
	return out
}
