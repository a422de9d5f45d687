package shard

import (
	"fmt"
	"testing"
)

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("ns-%d/gateway-%d", i%7, i)
	}
	return out
}

func owners(members []string, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		out[k] = Owner(members, k)
	}
	return out
}

// Each member gets a fair share of the keys.
func TestOwnerSpreadsKeys(t *testing.T) {
	members := []string{"translator-a", "translator-b", "translator-c"}
	ks := keys(3000)
	count := map[string]int{}
	for _, o := range owners(members, ks) {
		count[o]++
	}
	for _, m := range members {
		if share := float64(count[m]) / float64(len(ks)); share < 0.28 || share > 0.39 {
			t.Errorf("%s owns %.1f%% of the keys, want about a third (%v)", m, 100*share, count)
		}
	}
}

// A member that joins takes keys only for itself; one that leaves gives up
// only its own.
func TestOwnerMovesOnlyWhatMust(t *testing.T) {
	ks := keys(2000)
	before := owners([]string{"a", "b", "c"}, ks)
	joined := owners([]string{"a", "b", "c", "d"}, ks)
	moved := 0
	for _, k := range ks {
		if joined[k] != before[k] {
			moved++
			if joined[k] != "d" {
				t.Fatalf("%s moved from %s to %s when d joined", k, before[k], joined[k])
			}
		}
	}
	if moved == 0 {
		t.Fatal("d joined and got nothing")
	}
	left := owners([]string{"a", "c"}, ks)
	for _, k := range ks {
		if left[k] != before[k] && before[k] != "b" {
			t.Fatalf("%s moved from %s to %s when b left", k, before[k], left[k])
		}
	}
}

func TestView(t *testing.T) {
	v := NewView("b", "c", "a", "b")
	if got := fmt.Sprint(v.Members()); got != "[a b c]" {
		t.Fatalf("members %s, want [a b c]", got)
	}
	owned := 0
	for _, k := range keys(300) {
		if v.Owns(k) {
			owned++
			if v.Owner(k) != "b" {
				t.Fatalf("Owns(%s) but the owner is %s", k, v.Owner(k))
			}
		}
	}
	if owned == 0 {
		t.Fatal("b owns nothing")
	}
	if (View{}).Owns("x") || (View{}).Owner("x") != "" {
		t.Fatal("the zero view owns something")
	}
	if !v.Equal(NewView("a", "b", "c")) || v.Equal(NewView("a", "b")) {
		t.Fatal("Equal compares members")
	}
}
