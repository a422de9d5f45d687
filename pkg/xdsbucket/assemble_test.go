package xdsbucket_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// routes returns the route configurations of an assembled snapshot, with
// their versions, by name.
func routes(t *testing.T, snap *busv1.XdsSnapshot) (map[string][]byte, map[string]string) {
	t.Helper()
	values, versions := map[string][]byte{}, map[string]string{}
	for _, typed := range snap.GetResources() {
		if typed.GetTypeUrl() != xdsbucket.RouteType {
			continue
		}
		if len(typed.GetResourceVersions()) != len(typed.GetResources()) {
			t.Fatalf("%d route configurations, %d versions", len(typed.GetResources()), len(typed.GetResourceVersions()))
		}
		for i, a := range typed.GetResources() {
			value := a.GetValue()
			if p := typed.GetResourceParts(); len(p) > 0 {
				if len(value) > 0 {
					t.Fatalf("route configuration %d has a value and parts", i)
				}
				value = bytes.Join(p[i].GetParts(), nil)
			}
			_, _, n := protowire.ConsumeTag(value)
			b, _ := protowire.ConsumeBytes(value[n:])
			name := string(b)
			values[name], versions[name] = value, typed.GetResourceVersions()[i]
		}
	}
	return values, versions
}

// TestAssembleIncrementalEqualsFresh edits, adds and removes virtual hosts
// (whose orders change, and are shared by several) and route
// configurations of one Set, and of one that assembles in parts (in pages
// of 3 hosts on average, some hosts big enough to be parts of their own),
// at random, and checks after each change that their Assemble gives the
// route configurations, and versions, of a new Set holding the same
// resources; that a route configuration's
// version changes exactly when its bytes do; and that each is what
// JoinRoute makes of its shell and its virtual hosts.
func TestAssembleIncrementalEqualsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	set, inParts := xdsbucket.NewSet(), xdsbucket.NewSetInPages(3)
	live := map[string]*busv1.XdsResource{}
	put := func(r *busv1.XdsResource) {
		suffix, _, err := set.Put(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := inParts.Put(r); err != nil {
			t.Fatal(err)
		}
		live[suffix] = r
	}
	rcs := []string{"http-80", "https-443", "http-8080"}
	for _, rc := range rcs[:2] {
		put(&busv1.XdsResource{TypeUrl: xdsbucket.RouteType, Name: rc, Value: message(rc, nil, 1)})
	}
	prevValues, prevVersions := map[string][]byte{}, map[string]string{}
	for step := range 600 {
		rc := rcs[rng.IntN(len(rcs))]
		host := fmt.Sprintf("h%d.example.com", rng.IntN(40))
		shell := false
		for _, r := range live {
			shell = shell || (r.GetTypeUrl() == xdsbucket.RouteType && r.GetName() == rc)
		}
		switch op := rng.IntN(10); {
		case op < 6 && shell:
			put(&busv1.XdsResource{TypeUrl: xdsbucket.VirtualHostType, Name: host, RouteConfiguration: rc,
				Order: fmt.Sprint(rng.IntN(4)), Value: vhost(fmt.Sprintf("%s-%d%s", host, rng.IntN(3), strings.Repeat("x", bigHost(rng))))})
		case op < 8 && shell:
			for s, r := range live {
				if r.GetName() == host && r.GetRouteConfiguration() == rc {
					set.Delete(s)
					inParts.Delete(s)
					delete(live, s)
				}
			}
		default:
			put(&busv1.XdsResource{TypeUrl: xdsbucket.RouteType, Name: rc, Value: message(rc, nil, uint64(1+rng.IntN(2)))})
		}
		got, err := set.Assemble(set.Commit("default/gw", uint64(step)))
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		fresh := xdsbucket.NewSet()
		for _, r := range live {
			if _, _, err := fresh.Put(r); err != nil {
				t.Fatal(err)
			}
		}
		want, err := fresh.Assemble(fresh.Commit("default/gw", uint64(step)))
		if err != nil {
			t.Fatalf("step %d: fresh: %v", step, err)
		}
		values, versions := routes(t, got)
		wantValues, wantVersions := routes(t, want)
		gotParts, err := inParts.Assemble(inParts.Commit("default/gw", uint64(step)))
		if err != nil {
			t.Fatalf("step %d: in parts: %v", step, err)
		}
		if partValues, partVersions := routes(t, gotParts); !maps.EqualFunc(partValues, wantValues, bytes.Equal) ||
			!maps.Equal(partVersions, wantVersions) {
			t.Fatalf("step %d: in parts, the route configurations differ", step)
		}
		for _, typed := range gotParts.GetResources() {
			if typed.GetTypeUrl() == xdsbucket.RouteType && len(typed.GetResourceParts()) != len(typed.GetResources()) {
				t.Fatalf("step %d: %d route configurations, %d in parts", step, len(typed.GetResources()), len(typed.GetResourceParts()))
			}
		}
		if len(values) != len(wantValues) {
			t.Fatalf("step %d: %d route configurations, want %d", step, len(values), len(wantValues))
		}
		for name, v := range wantValues {
			if !bytes.Equal(values[name], v) || versions[name] != wantVersions[name] {
				t.Fatalf("step %d: %s = %x at %s, want %x at %s", step, name, values[name], versions[name], v, wantVersions[name])
			}
			if old, ok := prevValues[name]; ok && bytes.Equal(old, v) != (prevVersions[name] == versions[name]) {
				t.Fatalf("step %d: %s: bytes equal %v, versions %s and %s", step, name, bytes.Equal(old, v), prevVersions[name], versions[name])
			}
			var hosts []*busv1.XdsResource
			var shell []byte
			for _, r := range live {
				switch {
				case r.GetTypeUrl() == xdsbucket.VirtualHostType && r.GetRouteConfiguration() == name:
					hosts = append(hosts, r)
				case r.GetTypeUrl() == xdsbucket.RouteType && r.GetName() == name:
					shell = r.GetValue()
				}
			}
			if joined := xdsbucket.JoinRoute(shell, hosts); !bytes.Equal(v, joined) {
				t.Fatalf("step %d: %s = %x, want its shell and %d virtual hosts in order, %x", step, name, v, len(hosts), joined)
			}
		}
		prevValues, prevVersions = values, versions
	}
}

// bigHost is the padding of a virtual host: once in 20, 20 KiB, past the
// size from which a host is a part of its own rather than copied into a
// page.
func bigHost(rng *rand.Rand) int {
	if rng.IntN(20) == 0 {
		return 20 << 10
	}
	return 0
}

// TestAssembleInPagesEditCopiesOnePage checks that a route configuration
// of 3,000 virtual hosts assembled in parts is a hundred parts or so, not
// two per host, and that an edit of one host makes one new part (its
// page), the others being the previous assembly's bytes.
func TestAssembleInPagesEditCopiesOnePage(t *testing.T) {
	set, put := setInParts(t)
	var hosts []*busv1.XdsResource
	for i := range 3000 {
		hosts = append(hosts, numberedHost(i, 0))
		put(hosts[i])
	}
	parts := func(version uint64) [][]byte {
		snap, err := set.Assemble(set.Commit("default/gw", version))
		if err != nil {
			t.Fatal(err)
		}
		for _, typed := range snap.GetResources() {
			if typed.GetTypeUrl() == xdsbucket.RouteType {
				return typed.GetResourceParts()[0].GetParts()
			}
		}
		t.Fatal("no route configuration")
		return nil
	}
	before := parts(1)
	if len(before) < 20 || len(before) > 300 {
		t.Fatalf("3,000 virtual hosts in %d parts, want about 100 (pages of about 32)", len(before))
	}
	hosts[1500] = numberedHost(1500, 1)
	put(hosts[1500])
	after := parts(2)
	if joined := bytes.Join(after, nil); !bytes.Equal(joined, xdsbucket.JoinRoute(message("http-80", nil, 1), hosts)) {
		t.Fatal("the parts after the edit are not the route configuration of the shell and the hosts")
	}
	old := map[*byte]bool{}
	for _, p := range before {
		if len(p) > 0 {
			old[&p[0]] = true
		}
	}
	var fresh []int
	for _, p := range after {
		if len(p) > 0 && !old[&p[0]] {
			fresh = append(fresh, len(p))
		}
	}
	if len(fresh) != 1 || fresh[0] > 64<<10 {
		t.Fatalf("an edit of one host made new parts of %v bytes, want one page", fresh)
	}
}
