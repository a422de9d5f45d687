package main

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// fastYAML writes v, a value jsonToYAML decoded (maps with string keys,
// lists, strings, int64s, uint64s, float64s, booleans and nils), as go-yaml
// v2's Marshal writes it, byte for byte, at a fraction of the cost: go-yaml
// v2 reflects on every value and runs libyaml's emitter, which was most of
// printing 10,000 status documents.
//
// It writes the block structure itself (keys in go-yaml's order, two
// spaces of indentation, lists under a key not indented) and the scalars,
// folded as libyaml folds them past column 80, in the style go-yaml picks
// for each string, which it asks go-yaml for once (scalarStyle): that style
// (plain, single- or double-quoted) does not depend on where the string
// stands. It reports false, and the caller marshals with go-yaml, when it
// cannot be sure: a top-level value that is not a non-empty map or list, a
// string with a line break, a key longer than a simple key may be, a
// double-quoted string that may be folded, or keys go-yaml would not order
// strictly. TestFastYAMLMatches and FuzzFastYAML compare it with go-yaml.
func fastYAML(v any) ([]byte, bool) {
	w := &yamlWriter{}
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 || !w.mapping(v, 0, false) {
			return nil, false
		}
	case []any:
		if len(v) == 0 || !w.sequence(v, 0, false) {
			return nil, false
		}
	default:
		return nil, false
	}
	return w.buf.Bytes(), true
}

// The limits of libyaml's emitter, as go-yaml v2 sets it up: lines are
// folded at a space past best width; a key longer than maxSimpleKey is not
// written as a simple key.
const (
	yamlBestWidth    = 80
	yamlMaxSimpleKey = 128
)

type yamlWriter struct {
	buf bytes.Buffer
}

// mapping writes m's keys at indent; with inline, the first key follows
// what is already on the line ("- ").
func (w *yamlWriter) mapping(m map[string]any, indent int, inline bool) bool {
	keys, ok := yamlKeys(m)
	if !ok {
		return false
	}
	for i, k := range keys {
		if i > 0 || !inline {
			w.indent(indent)
		}
		if len(k) > yamlMaxSimpleKey { // go-yaml writes it as a complex key
			return false
		}
		if !w.str(k, w.column(), 0, false) {
			return false
		}
		w.buf.WriteByte(':')
		switch v := m[k].(type) {
		case map[string]any:
			if len(v) > 0 {
				w.buf.WriteByte('\n')
				if !w.mapping(v, indent+2, false) {
					return false
				}
				continue
			}
		case []any:
			if len(v) > 0 {
				w.buf.WriteByte('\n')
				if !w.sequence(v, indent, false) { // a list under a key is not indented
					return false
				}
				continue
			}
		}
		w.buf.WriteByte(' ')
		if !w.scalar(m[k], w.column(), indent+2) {
			return false
		}
	}
	return true
}

// sequence writes s's items at indent; with inline, the first follows what
// is already on the line.
func (w *yamlWriter) sequence(s []any, indent int, inline bool) bool {
	for i, item := range s {
		if i > 0 || !inline {
			w.indent(indent)
		}
		w.buf.WriteString("- ")
		switch v := item.(type) {
		case map[string]any:
			if len(v) > 0 {
				if !w.mapping(v, indent+2, true) {
					return false
				}
				continue
			}
		case []any:
			if len(v) > 0 {
				if !w.sequence(v, indent+2, true) {
					return false
				}
				continue
			}
		}
		if !w.scalar(item, indent+2, indent+2) {
			return false
		}
	}
	return true
}

func (w *yamlWriter) indent(n int) {
	for range n {
		w.buf.WriteByte(' ')
	}
}

// column is the column the next byte is written at.
func (w *yamlWriter) column() int {
	b := w.buf.Bytes()
	return utf8.RuneCount(b[bytes.LastIndexByte(b, '\n')+1:])
}

// scalar writes v, starting at column, and ends the line; a long string is
// folded onto lines that start at indent.
func (w *yamlWriter) scalar(v any, column, indent int) bool {
	var s string
	switch v := v.(type) {
	case nil:
		s = "null"
	case bool:
		s = strconv.FormatBool(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	case uint64:
		s = strconv.FormatUint(v, 10)
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
		switch {
		case math.IsInf(v, 1):
			s = ".inf"
		case math.IsInf(v, -1):
			s = "-.inf"
		case math.IsNaN(v):
			s = ".nan"
		}
	case string:
		if !w.str(v, column, indent, true) {
			return false
		}
		w.buf.WriteByte('\n')
		return true
	case map[string]any:
		s = "{}" // empty: the others are not scalars
	case []any:
		s = "[]"
	default:
		return false
	}
	w.buf.WriteString(s)
	w.buf.WriteByte('\n')
	return true
}

// str writes the string s in go-yaml's style for it, starting at column;
// with breaks (a value, not a key), folded as libyaml folds it: at a space
// past the best width, onto a line that starts at indent.
func (w *yamlWriter) str(s string, column, indent int, breaks bool) bool {
	style, double, ok := scalarStyle(s)
	switch {
	case !ok:
		return false
	case style == '"':
		if breaks && column+utf8.RuneCountInString(double) > yamlBestWidth && strings.IndexByte(double, ' ') >= 0 {
			return false // it may be folded, with escapes
		}
		w.buf.WriteString(double)
	case style == '\'':
		w.buf.WriteByte('\'')
		w.fold(s, column+1, indent, breaks, true)
		w.buf.WriteByte('\'')
	default:
		w.fold(s, column, indent, breaks, false)
	}
	return true
}

// fold writes s from column as libyaml writes a plain or (quoted) single-
// quoted scalar: a space that comes past the best width, not after another
// space nor before one (nor first or last, quoted), is a line break and the
// indentation instead; a quote is doubled.
func (w *yamlWriter) fold(s string, column, indent int, breaks, quoted bool) {
	r := []rune(s)
	spaces := false
	for i, c := range r {
		if c != ' ' {
			if quoted && c == '\'' {
				w.buf.WriteByte('\'')
				column++
			}
			w.buf.WriteRune(c)
			column++
			spaces = false
			continue
		}
		if breaks && !spaces && column > yamlBestWidth && i+1 < len(r) && r[i+1] != ' ' && (!quoted || i > 0) {
			w.buf.WriteByte('\n')
			w.indent(indent)
			column = indent
		} else {
			w.buf.WriteByte(' ')
			column++
		}
		spaces = true
	}
}

// styles holds go-yaml's style for the strings seen so far: 0 for one
// fastYAML declines. It keeps at most maxStyles strings of at most 256
// bytes.
var styles struct {
	sync.Mutex
	m map[string]styled
}

type styled struct {
	style  byte   // 'p' plain, '\'' single-quoted, '"' double-quoted; 0: declined
	double string // the double-quoted text
}

const maxStyles = 1 << 16

// scalarStyle is the style go-yaml v2 writes the string s in, as a value or
// key of a block mapping or list: plain, or quoted when plain would read as
// something else (a number, a boolean, a time) or is not allowed; and the
// text of a double-quoted one. It asks go-yaml, which picks the style
// whatever the scalar's place and length; false for the styles fastYAML
// does not write (literal, for strings with line breaks; tagged), and for
// a double-quoted string go-yaml folds. A string of letters, digits, '.',
// '_', '/' and '-' that starts with a letter and is no YAML boolean or null
// is plain without asking.
func scalarStyle(s string) (byte, string, bool) {
	if plainWord(s) {
		return 'p', "", true
	}
	styles.Lock()
	st, ok := styles.m[s]
	styles.Unlock()
	if !ok {
		st = askStyle(s)
		if len(s) <= 256 {
			styles.Lock()
			if styles.m == nil || len(styles.m) >= maxStyles {
				styles.m = map[string]styled{}
			}
			styles.m[s] = st
			styles.Unlock()
		}
	}
	return st.style, st.double, st.style != 0
}

func askStyle(s string) styled {
	out, err := yamlv2.Marshal(s)
	if err != nil || len(out) == 0 || strings.ContainsRune(s, '\n') {
		return styled{}
	}
	out = out[:len(out)-1]
	switch out[0] {
	case '\'':
		return styled{style: '\''}
	case '"':
		if bytes.IndexByte(out, '\n') >= 0 {
			return styled{}
		}
		return styled{style: '"', double: string(out)}
	case '|', '>', '!', '&', '*':
		return styled{}
	}
	return styled{style: 'p'}
}

// yamlKeys returns m's keys in go-yaml v2's order; false when two keys are
// not strictly ordered (go-yaml's order then depends on the map's).
func yamlKeys(m map[string]any) ([]string, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case yamlKeyLess(a, b):
			return -1
		case yamlKeyLess(b, a):
			return 1
		}
		return 0
	})
	for i := 1; i < len(keys); i++ {
		if !yamlKeyLess(keys[i-1], keys[i]) {
			return nil, false
		}
	}
	return keys, true
}

// yamlKeyLess is go-yaml v2's order of string keys (keyList.Less): rune by
// rune, letters before other runes, runs of digits by their value.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// yamlWords are the words YAML 1.1 reads as booleans or null.
var yamlWords = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true, "null": true, "Null": true, "NULL": true,
}

// plainWord reports whether s is written plain for sure: letters, digits,
// '.', '_', '/' and '-', starting with a letter, and no YAML boolean or null.
func plainWord(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') || yamlWords[s] {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}
