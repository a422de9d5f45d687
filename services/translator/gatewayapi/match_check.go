package gatewayapi

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The checks below hold values the Kubernetes API server would have refused
// (the CRDs' validation) and values Envoy would refuse: objects from the file
// provider are not validated by an API server, and one bad value must not
// make a whole gateway's configuration invalid. A failed check is a problem
// that names the field.

// maxRegexProgram is the largest estimated RE2 program gatewire sends to
// Envoy. Envoy refuses a regular expression whose program is larger than
// its runtime's re2.max_program_size.error_level (100 unless the bootstrap
// raises it), and that refusal would reject the configuration of the whole
// listener; so a regular expression over the limit is refused here, on its
// route alone.
const maxRegexProgram = 100

func fieldf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func unsupported(format string, args ...any) *problem {
	return &problem{string(gatewayv1.RouteReasonUnsupportedValue), fmt.Sprintf(format, args...)}
}

func incompatible(format string, args ...any) *problem {
	return &problem{string(gatewayv1.RouteReasonIncompatibleFilters), fmt.Sprintf(format, args...)}
}

// checkPath checks the value of an Exact or PathPrefix path match: an
// absolute path without "//", "." or ".." segments, encoded slashes,
// fragments or queries.
func checkPath(path, field string) *problem {
	switch {
	case !strings.HasPrefix(path, "/"):
		return unsupported("%s: %q must start with '/'", field, path)
	case len(path) > 1024:
		return unsupported("%s: longer than 1024 characters", field)
	case !isPathSyntax(path):
		return unsupported("%s: %q has characters that are not allowed in a path", field, path)
	}
	for _, bad := range []string{"//", "/./", "/../", "%2f", "%2F"} {
		if strings.Contains(path, bad) {
			return unsupported("%s: %q must not contain %q", field, path, bad)
		}
	}
	if strings.HasSuffix(path, "/..") || strings.HasSuffix(path, "/.") {
		return unsupported("%s: %q must not end with a '.' or '..' segment", field, path)
	}
	return nil
}

// checkHeaderName checks an HTTP header or query parameter name.
func checkHeaderName(name, field string) *problem {
	if len(name) > 256 || !isHeaderName(name) {
		return unsupported("%s: %q is not a valid header name", field, name)
	}
	return nil
}

// checkHeaderValue checks a header value to match or to set: not empty, no
// line breaks or NUL.
func checkHeaderValue(value, field string) *problem {
	switch {
	case value == "":
		return unsupported("%s: must not be empty", field)
	case len(value) > 4096:
		return unsupported("%s: longer than 4096 characters", field)
	case strings.ContainsAny(value, "\x00\r\n") || !utf8.ValidString(value):
		return unsupported("%s: %q has characters that are not allowed in a header", field, value)
	}
	return nil
}

// checkHostname checks a precise hostname (no wildcard).
func checkHostname(host, field string) *problem {
	if len(host) > 253 || !isPreciseHostname(host) {
		return unsupported("%s: %q is not a valid hostname", field, host)
	}
	return nil
}

// checkRegex checks a regular expression that Envoy will compile with RE2:
// its syntax (Go's regexp is RE2's) and the size of its program.
func checkRegex(expr, field string) *problem {
	if expr == "" {
		return unsupported("%s: empty regular expression", field)
	}
	if !utf8.ValidString(expr) {
		return unsupported("%s: regular expression is not valid UTF-8", field)
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return unsupported("%s: invalid regular expression %q: %v", field, expr, err)
	}
	if name := duplicateGroup(re); name != "" {
		return unsupported("%s: invalid regular expression %q: duplicate capture group name %q", field, expr, name)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return unsupported("%s: invalid regular expression %q: %v", field, expr, err)
	}
	if n := re2ProgramSize(prog); n > maxRegexProgram {
		return unsupported("%s: regular expression %q is too complex (estimated program size %d, at most %d)",
			field, expr, n, maxRegexProgram)
	}
	return nil
}

// duplicateGroup returns a capture group name used twice, which RE2
// refuses and Go's parser allows.
func duplicateGroup(re *syntax.Regexp) string {
	seen := map[string]bool{}
	for _, name := range re.CapNames() {
		if name != "" && seen[name] {
			return name
		}
		seen[name] = true
	}
	return ""
}

// re2ProgramSize estimates the size of RE2's program for a regular
// expression from Go's, which is built the same way except that RE2 matches
// bytes: a character class is one instruction per range of ASCII bytes,
// and a few more (one per UTF-8 sequence length and continuation) for a
// range beyond ASCII.
func re2ProgramSize(prog *syntax.Prog) int {
	n := 0
	for i := range prog.Inst {
		in := &prog.Inst[i]
		switch in.Op {
		case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			n += nonASCIICost
		case syntax.InstRune, syntax.InstRune1:
			n += runeCost(in.Rune)
		default:
			n++
		}
	}
	return n
}

// nonASCIICost is the estimated size of matching any rune beyond ASCII.
const nonASCIICost = 8

// runeCost estimates the instructions of a rune class given as ranges
// (lo, hi pairs), or of a single rune.
func runeCost(runes []rune) int {
	if len(runes) == 1 {
		return max(utf8.RuneLen(runes[0]), 1)
	}
	n := 0
	for i := 0; i+1 < len(runes); i += 2 {
		if runes[i+1] < utf8.RuneSelf {
			n++
		} else {
			n += nonASCIICost
		}
	}
	return max(n, 1)
}
