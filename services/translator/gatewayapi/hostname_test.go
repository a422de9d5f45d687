package gatewayapi

import (
	"slices"
	"testing"
)

func TestIntersect(t *testing.T) {
	cases := []struct {
		listener string
		route    []string
		want     []string
	}{
		{"", nil, []string{"*"}},
		{"", []string{"a.example.com"}, []string{"a.example.com"}},
		{"a.example.com", nil, []string{"a.example.com"}},
		{"a.example.com", []string{"a.example.com", "b.example.com"}, []string{"a.example.com"}},
		{"*.example.com", []string{"a.example.com", "a.b.example.com", "example.com"}, []string{"a.example.com", "a.b.example.com"}},
		{"*.example.com", []string{"*.com"}, []string{"*.example.com"}},
		{"*.example.com", []string{"*.b.example.com", "*.example.com"}, []string{"*.b.example.com", "*.example.com"}},
		{"a.example.com", []string{"*.example.com"}, []string{"a.example.com"}},
		{"a.example.com", []string{"*.other.com", "*.com", "*.example.com"}, []string{"a.example.com"}},
		{"a.example.com", []string{"other.com"}, nil},
	}
	for _, c := range cases {
		if got := intersect(c.listener, c.route); !slices.Equal(got, c.want) {
			t.Errorf("intersect(%q, %q) = %q, want %q", c.listener, c.route, got, c.want)
		}
	}
}

func TestCoveringHostnames(t *testing.T) {
	cases := map[string][]string{
		"a.b.com":   {"a.b.com", "*.b.com", "*.com", "*"},
		"*.b.com":   {"*.b.com", "*.com", "*"},
		"localhost": {"localhost", "*"},
		"*":         {"*"},
	}
	for in, want := range cases {
		if got := coveringHostnames(in); !slices.Equal(got, want) {
			t.Errorf("coveringHostnames(%q) = %q, want %q", in, got, want)
		}
	}
}
