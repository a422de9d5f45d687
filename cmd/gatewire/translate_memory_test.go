package main

import (
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/manifest"
)

// TestMemoryLimitFlag checks what -memory-limit takes and that a bad value
// is an error that names the flag.
func TestMemoryLimitFlag(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want memoryLimit
	}{
		{"auto", memoryLimit{auto: true}},
		{"off", memoryLimit{}},
		{"300MiB", memoryLimit{bytes: 300 << 20}},
		{"1GiB", memoryLimit{bytes: 1 << 30}},
	} {
		opts, err := parseTranslateFlags([]string{"-f", "a", "-memory-limit", tc.arg}, io.Discard)
		if err != nil || opts.memory != tc.want {
			t.Errorf("-memory-limit %s: parsed %+v, %v; want %+v", tc.arg, opts.memory, err, tc.want)
		}
	}
	if opts, err := parseTranslateFlags([]string{"-f", "a"}, io.Discard); err != nil || !opts.memory.auto {
		t.Errorf("default: parsed %+v, %v; want auto", opts.memory, err)
	}
	for _, bad := range []string{"lots", "-5MiB", "12MB"} {
		_, err := parseTranslateFlags([]string{"-f", "a", "-memory-limit", bad}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-memory-limit") || !strings.Contains(err.Error(), "want auto, off or a size") {
			t.Errorf("-memory-limit %s: %v; want an error naming the flag", bad, err)
		}
	}
}

// TestAutoLimit checks the limit auto sets: a multiple of the live heap,
// never under the floor.
func TestAutoLimit(t *testing.T) {
	if got := autoLimit(10 << 20); got != minAutoLimit {
		t.Errorf("a 10 MiB heap: limit %d, want the floor %d", got, minAutoLimit)
	}
	if got, want := autoLimit(400<<20), int64(1000<<20); got != want {
		t.Errorf("a 400 MiB heap: limit %d MiB, want %d MiB", got>>20, want>>20)
	}
}

// TestApplyMemoryLimit checks that the limit is set for the translation and
// restored after it, and that GOMEMLIMIT wins.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	what, restore := applyMemoryLimit(memoryLimit{bytes: 700 << 20})
	if got := debug.SetMemoryLimit(-1); got != 700<<20 || !strings.Contains(what, "700 MiB") {
		t.Errorf("fixed: limit %d, said %q", got, what)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("restored limit %d, want %d", got, before)
	}
	what, restore = applyMemoryLimit(memoryLimit{auto: true})
	if got := debug.SetMemoryLimit(-1); got < minAutoLimit || !strings.Contains(what, "the live heap") {
		t.Errorf("auto: limit %d, said %q", got, what)
	}
	restore()
	t.Setenv("GOMEMLIMIT", "1GiB")
	what, restore = applyMemoryLimit(memoryLimit{bytes: 700 << 20})
	defer restore()
	if got := debug.SetMemoryLimit(-1); got != before || what != "" {
		t.Errorf("with GOMEMLIMIT: limit %d, said %q; want it left alone", got, what)
	}
}

// TestPrinted checks that only the objects the output prints are kept, in
// their order.
func TestPrinted(t *testing.T) {
	obj := func(group, kind, name string) manifest.Object {
		return manifest.Object{Kind: manifest.Kind{Group: group, Version: "v1", Kind: kind}, Name: name, JSON: []byte("{}")}
	}
	in := []manifest.Object{
		obj("", "Service", "s1"), obj("gateway.networking.k8s.io", "Gateway", "g"),
		obj("discovery.k8s.io", "EndpointSlice", "e1"), obj("gateway.networking.k8s.io", "HTTPRoute", "r"),
	}
	var names []string
	for _, o := range printed("status", slices.Clone(in)) {
		names = append(names, o.Name)
	}
	if !slices.Equal(names, []string{"g", "r"}) {
		t.Errorf("status: kept %q, want the Gateway API objects [g r]", names)
	}
	for _, output := range []string{"ir", "xds"} {
		if got := printed(output, slices.Clone(in)); len(got) != 0 {
			t.Errorf("%s: kept %d objects, want none", output, len(got))
		}
	}
}
