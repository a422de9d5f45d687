package gatewayapi

import (
	"regexp"
	"testing"
)

// syntaxes are the checks of syntax.go and the regular expressions each
// is equal to.
var syntaxes = []struct {
	name  string
	check func(string) bool
	re    *regexp.Regexp
}{
	{"header name", isHeaderName, regexp.MustCompile("^[A-Za-z0-9!#$%&'*+\\-.^_`|~]+$")},
	{"path", isPathSyntax, regexp.MustCompile(`^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$`)},
	{"precise hostname", isPreciseHostname, regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)},
	{"route hostname", isRouteHostname, regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)},
}

// syntaxSamples are inputs at the edges of the syntaxes.
var syntaxSamples = []string{
	"", "a", "A", "-", ".", "*", "*.", "*.a", "*.*.a", "a.", ".a", "a..b", "a-b", "-a", "a-", "a.-b", "a.b-",
	"www.example.com", "WWW.example.com", "x_y", "x y", "é", "a\x00", "/", "//", "/a/b", "/%", "/%4", "/%41",
	"/%4g", "/%zz", "%41", "/a?b", "/a#b", "/~!$&'()*+,;=:@", "x-request-id", ":authority", "a|b", "a\"b",
	"123", "1.2.3.4", "a.b.c.d.e", "*.example.com", "example.*", "\xff", "/\xff",
}

func TestSyntaxMatchesRegexp(t *testing.T) {
	for _, s := range syntaxes {
		for _, in := range syntaxSamples {
			if got, want := s.check(in), s.re.MatchString(in); got != want {
				t.Errorf("%s of %q: %v, the regular expression says %v", s.name, in, got, want)
			}
		}
	}
}

func FuzzSyntax(f *testing.F) {
	for _, in := range syntaxSamples {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, s := range syntaxes {
			if got, want := s.check(in), s.re.MatchString(in); got != want {
				t.Fatalf("%s of %q: %v, the regular expression says %v", s.name, in, got, want)
			}
		}
	})
}
