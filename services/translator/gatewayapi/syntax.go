package gatewayapi

import "strings"

// The syntaxes every route's paths, header names and hostnames are checked
// against, written as loops over bytes: as regular expressions they were
// a tenth of a whole translation's checks. syntax_test.go holds each as the
// regular expression it is equal to, and compares the two.

// tokenChars are the bytes of an HTTP token (a header name), pathChars the
// bytes a path may hold unescaped.
var tokenChars, pathChars = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~"),
	byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-/._~!$&'()*+,;=:@")

func byteSet(chars string) (set [256]bool) {
	for i := range len(chars) {
		set[chars[i]] = true
	}
	return set
}

// isHeaderName reports whether s is an HTTP header name: one or more token
// bytes.
func isHeaderName(s string) bool {
	for i := range len(s) {
		if !tokenChars[s[i]] {
			return false
		}
	}
	return s != ""
}

// isPathSyntax reports whether s is one or more path bytes or escapes
// ("%" and two hexadecimal digits).
func isPathSyntax(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		} else if !pathChars[s[i]] {
			return false
		}
	}
	return s != ""
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isPreciseHostname reports whether s is an RFC 1123 hostname without
// wildcard: labels of lowercase letters, digits and '-', each starting
// and ending with a letter or digit, joined by '.'.
func isPreciseHostname(s string) bool {
	for {
		label, rest, more := strings.Cut(s, ".")
		if !isLabel(label) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

func isLabel(l string) bool {
	if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := range len(l) {
		if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isRouteHostname reports whether s is a route's hostname: a precise one,
// possibly after "*.".
func isRouteHostname(s string) bool {
	return isPreciseHostname(strings.TrimPrefix(s, "*."))
}
