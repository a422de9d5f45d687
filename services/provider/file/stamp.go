package file

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// The bytes of a published object, made from the object's JSON as it is.
//
// An object's JSON is compact and its keys are sorted at every level, as
// manifest.EncodeJSON writes it. What the provider publishes is that JSON
// with metadata.generation and metadata.resourceVersion set, and what it
// hashes is that JSON without them (content) and without metadata (spec).
// Decoding the object to set two fields and hash it, and encoding it three
// times, was an eighth of the provider's CPU on a start at 10,000 routes;
// objectJSON cuts and splices the bytes instead. It reads only JSON it can
// take apart with certainty (a top-level object whose metadata is an
// object, and no escaped key at those two levels); for anything else the
// provider decodes the object (nextDecoded, publish.go), with the same
// result. Only the decoder's own JSON is read this way: a value read back
// from the bucket may come from another writer, and is decoded (recordOf).

// member is one member of a JSON object: its key (without quotes, as
// written) and where the member and its value start and end in the JSON.
type member struct {
	key               string
	start, value, end int
}

// objectJSON is an object's JSON with the members of the object and of its
// metadata.
type objectJSON struct {
	data     []byte
	top      []member
	meta     []member // of the metadata object
	metaAt   int      // index of metadata in top
	metaOpen int      // offset of the metadata object's '{'
}

// parseObjectJSON takes data apart; false when it cannot with certainty.
func parseObjectJSON(data []byte) (objectJSON, bool) {
	o := objectJSON{data: data, metaAt: -1}
	var ok bool
	if o.top, ok = members(data, 0); !ok {
		return o, false
	}
	for i, m := range o.top {
		if m.key == "metadata" {
			o.metaAt, o.metaOpen = i, m.value
		}
	}
	if o.metaAt < 0 {
		return o, false
	}
	o.meta, ok = members(data, o.metaOpen)
	return o, ok
}

// has reports whether metadata has a member named key.
func (o objectJSON) has(key string) bool {
	for _, m := range o.meta {
		if m.key == key {
			return true
		}
	}
	return false
}

// uid is the value of metadata.uid, "" when there is none.
func (o objectJSON) uid() string {
	for _, m := range o.meta {
		if m.key == "uid" {
			var s string
			if json.Unmarshal(o.data[m.value:m.end], &s) == nil {
				return s
			}
		}
	}
	return ""
}

// withoutMetadata is the JSON of the object without its metadata member
// and the comma that separates it from the next one (or the one before).
func (o objectJSON) withoutMetadata() []byte {
	start, end := o.top[o.metaAt].start, o.top[o.metaAt].end
	switch {
	case o.metaAt+1 < len(o.top):
		end = o.top[o.metaAt+1].start
	case o.metaAt > 0:
		start = o.top[o.metaAt-1].end
	}
	return slices.Concat(o.data[:start], o.data[end:])
}

// stamped is the JSON of the object with metadata.generation and
// metadata.resourceVersion set to generation and resourceVersion, where
// EncodeJSON would write them (keys sorted). The object must have neither
// (next checks).
func (o objectJSON) stamped(generation int64, resourceVersion string) []byte {
	stamps := []struct {
		key  string
		text []byte
	}{
		{"generation", strconv.AppendInt([]byte(`"generation":`), generation, 10)},
		{"resourceVersion", []byte(`"resourceVersion":"` + resourceVersion + `"`)},
	}
	out := make([]byte, 0, len(o.data)+len(resourceVersion)+48)
	out = append(out, o.data[:o.metaOpen+1]...)
	put := func(member []byte) {
		if out[len(out)-1] != '{' { // not the first member
			out = append(out, ',')
		}
		out = append(out, member...)
	}
	for _, m := range o.meta {
		for len(stamps) > 0 && stamps[0].key < m.key {
			put(stamps[0].text)
			stamps = stamps[1:]
		}
		put(o.data[m.start:m.end])
	}
	for _, st := range stamps {
		put(st.text)
	}
	metaClose := o.top[o.metaAt].end - 1 // the metadata object's '}'
	return append(out, o.data[metaClose:]...)
}

// members returns the members of the compact JSON object at data[open], in
// order; false when it is not one, or a key has an escape.
func members(data []byte, open int) ([]member, bool) {
	if open >= len(data) || data[open] != '{' {
		return nil, false
	}
	var out []member
	i := open + 1
	if i < len(data) && data[i] == '}' {
		return out, true
	}
	for i < len(data) {
		if data[i] != '"' {
			return nil, false
		}
		keyEnd := bytes.IndexByte(data[i+1:], '"')
		if keyEnd < 0 {
			return nil, false
		}
		key := data[i+1 : i+1+keyEnd]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		colon := i + 1 + keyEnd + 1
		if colon >= len(data) || data[colon] != ':' {
			return nil, false
		}
		end, ok := skipValue(data, colon+1)
		if !ok {
			return nil, false
		}
		out = append(out, member{key: string(key), start: i, value: colon + 1, end: end})
		switch {
		case end < len(data) && data[end] == ',':
			i = end + 1
		case end < len(data) && data[end] == '}':
			return out, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// skipValue returns the end of the compact JSON value at data[i]; false
// when there is none.
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] == ',' || data[i] == '}' || data[i] == ']' {
		return 0, false
	}
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			i++
		}
		if i > len(data) {
			return 0, false // a string that does not end
		}
		if depth == 0 && i < len(data) && (data[i] == ',' || data[i] == '}' || data[i] == ']') {
			return i, true
		}
	}
	return i, depth == 0
}
