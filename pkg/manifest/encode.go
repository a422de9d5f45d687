package manifest

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// EncodeJSON encodes v, a value as JSON decodes it into an any (maps with
// string keys, lists, strings, int64s, float64s, json.Numbers, booleans and
// nil), to exactly the bytes encoding/json.Marshal gives: keys sorted, HTML
// characters escaped, invalid UTF-8 replaced. It is several times faster,
// as it needs no reflection. A value of any other type is left to
// encoding/json.
//
// The result is exactly as long as its capacity: callers keep many of them.
func EncodeJSON(v any) ([]byte, error) {
	buf := encodeBuffers.Get().(*[]byte)
	defer encodeBuffers.Put(buf)
	b, ok := appendJSON((*buf)[:0], v)
	*buf = b
	if !ok {
		return json.Marshal(v)
	}
	return slices.Clone(b), nil
}

// encodeBuffers holds the buffers EncodeJSON encodes into.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// appendJSON appends the encoding of v to dst; ok is false when v holds a
// value appendJSON does not encode, or one encoding/json refuses.
func appendJSON(dst []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return appendString(dst, v), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case float64, json.Number:
		b, err := json.Marshal(v) // its format (and its checks) for these
		return append(dst, b...), err == nil
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendString(dst, k), ':')
			if dst, ok = appendJSON(dst, v[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = appendJSON(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

const hexDigits = "0123456789abcdef"

// appendString appends s quoted as encoding/json quotes strings with HTML
// escaping on.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
