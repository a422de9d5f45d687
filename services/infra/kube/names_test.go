package kube_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gatewire/gatewire/services/infra/kube"
)

func TestObjectName(t *testing.T) {
	long := strings.Repeat("g", 80)
	for _, c := range []struct {
		namespace, name string
		shared          bool
		want            string // "" checks only validity and the prefix
	}{
		{"default", "eg", false, "gatewire-eg"},
		{"default", "eg", true, "gatewire-default-eg-"},
		{"default", "web.example", false, "gatewire-web-example-"},
		{"default", long, false, ""},
		{"team-with-a-very-long-namespace-name-indeed", long, true, ""},
	} {
		got := kube.ObjectName(c.namespace, c.name, c.shared)
		if errs := validation.IsDNS1035Label(got); len(errs) > 0 {
			t.Errorf("ObjectName(%q, %q, %v) = %q: not a Service name: %v", c.namespace, c.name, c.shared, got, errs)
		}
		if !strings.HasPrefix(got, "gatewire-") || (c.want != "" && !strings.HasPrefix(got, c.want)) {
			t.Errorf("ObjectName(%q, %q, %v) = %q, want %q...", c.namespace, c.name, c.shared, got, c.want)
		}
		if c.want != "" && !strings.HasSuffix(c.want, "-") && got != c.want {
			t.Errorf("ObjectName(%q, %q, %v) = %q, want %q", c.namespace, c.name, c.shared, got, c.want)
		}
	}
}

// TestObjectNameDistinct checks the names that would meet without a hash.
func TestObjectNameDistinct(t *testing.T) {
	pairs := [][2][2]string{
		{{"a-b", "c"}, {"a", "b-c"}},                                                 // shared namespace
		{{"default", "web.example"}, {"default", "web-example"}},                     // dots
		{{"x", strings.Repeat("g", 70) + "1"}, {"x", strings.Repeat("g", 70) + "2"}}, // cut
	}
	for _, p := range pairs {
		for _, shared := range []bool{false, true} {
			a := kube.ObjectName(p[0][0], p[0][1], shared)
			b := kube.ObjectName(p[1][0], p[1][1], shared)
			if a == b && (shared || p[0][0] == p[1][0]) {
				t.Errorf("gateways %s/%s and %s/%s share the name %q (shared %v)", p[0][0], p[0][1], p[1][0], p[1][1], a, shared)
			}
		}
	}
}

func TestLabelValue(t *testing.T) {
	if got := kube.LabelValue("default", "web.example"); got != "web.example" {
		t.Errorf("LabelValue(web.example) = %q", got)
	}
	long1, long2 := strings.Repeat("g", 70)+"1", strings.Repeat("g", 70)+"2"
	a, b := kube.LabelValue("default", long1), kube.LabelValue("default", long2)
	for _, v := range []string{a, b} {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("LabelValue = %q: %v", v, errs)
		}
	}
	if a == b {
		t.Errorf("two long names share the label value %q", a)
	}
}
