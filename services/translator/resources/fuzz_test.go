package resources

import (
	"slices"
	"testing"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// FuzzApply decodes any bytes as the object of a Resource of every kind
// the index holds: Apply never panics, an object that does not decode is
// an error naming it, and a removal after it is harmless.
func FuzzApply(f *testing.F) {
	names := make([]string, 0, len(kinds))
	for name := range kinds {
		names = append(names, name)
	}
	slices.Sort(names)
	seeds := []string{
		`{"spec":{"parentRefs":[{"name":"gw"}],"rules":[{"backendRefs":[{"name":"svc","port":80}]}]}}`,
		`{"spec":{"gatewayClassName":"gatewire","listeners":[{"name":"http","port":80,"protocol":"HTTP"}]}}`,
		`{"spec":{"ports":[{"port":80}]},"endpoints":[{"addresses":["10.0.0.1"]}]}`,
		`{"data":{"tls.crt":"AA=="}}`, `null`, `[]`, `{"spec":7}`, ``,
	}
	for i := range names {
		for _, s := range seeds {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, object string) {
		name := names[int(which)%len(names)]
		idx := NewIndex()
		r := &busv1.Resource{Group: kinds[name].group(), Version: "v1", Kind: name, Namespace: "default", Name: "fuzz", Object: []byte(object)}
		if _, err := idx.Apply(r); err != nil {
			return
		}
		gw := &busv1.Resource{Group: kinds[KindGateway].group(), Version: "v1", Kind: KindGateway, Namespace: "default", Name: "gw",
			Object: []byte(`{"spec":{"gatewayClassName":"gatewire","listeners":[{"name":"http","port":80,"protocol":"HTTP"}]}}`)}
		if _, err := idx.Apply(gw); err != nil {
			t.Fatal(err)
		}
		if _, err := idx.Apply(r); err != nil {
			t.Fatalf("the same object applied again: %v", err)
		}
		idx.Remove(name, "default", "fuzz")
	})
}
