package gatewayapi

import (
	"strings"
	"testing"
)

func TestCheckRegex(t *testing.T) {
	for expr, ok := range map[string]bool{
		`^/api/v[0-9]+/users/[^/]+$`: true,
		`/foo.*`:                     true,
		`(?i)^/admin`:                true,
		``:                           false,
		`[a-`:                        false,
		`(?P<x>a)(?P<x>b)`:           false,
		`a{1001}`:                    false,
		`[a-z]{200}`:                 false, // RE2 program far over 100
		strings.Repeat("a", 99):      false,
		strings.Repeat("a", 60):      true,
		"\xff":                       false,
	} {
		if p := checkRegex(expr, "f"); (p == nil) != ok {
			t.Errorf("checkRegex(%q) = %v, want ok=%v", expr, p, ok)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for path, ok := range map[string]bool{
		"/":           true,
		"/foo/bar/":   true,
		"/a%20b":      true,
		"foo":         false,
		"//foo":       false,
		"/foo?x=1":    false,
		"/foo#x":      false,
		"/a/../b":     false,
		"/a/.":        false,
		"/a%2fb":      false,
		"/with space": false,
	} {
		if p := checkPath(path, "f"); (p == nil) != ok {
			t.Errorf("checkPath(%q) = %v, want ok=%v", path, p, ok)
		}
	}
}

func TestRegexSizeEstimate(t *testing.T) {
	for expr, ok := range map[string]bool{
		`^[a-f0-9]{64}$`:             false, // two byte ranges per repetition: over 100 in RE2
		`^[a-f0-9]{32}$`:             true,
		`^/api/v[0-9]+/users/[^/]+$`: true,
		`.*`:                         true,
	} {
		if p := checkRegex(expr, "f"); (p == nil) != ok {
			t.Errorf("checkRegex(%q) = %v, want ok=%v", expr, p, ok)
		}
	}
}
