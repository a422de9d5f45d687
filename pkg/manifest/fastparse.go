package manifest

import (
	"strings"
)

// parseFast reads the documents of a manifest written in the plain subset
// of YAML that Kubernetes manifests use, without go-yaml's node trees:
// block mappings and sequences indented with spaces, flow mappings and
// sequences that end on the line they start on, single-line quoted and
// plain scalars, comments and "---" between documents. It returns each
// document's value, as fastValue would give it from go-yaml's node, and
// the line of its first key. It reports false for anything else, and for
// any input it is not sure to read as go-yaml does: then Decode reads the
// manifest with go-yaml (TestParseFastMatches, FuzzParseFast). The subset
// leaves out tabs, carriage returns, bytes outside printable ASCII,
// anchors, aliases, tags, directives, block and multi-line scalars,
// complex and duplicate keys, merge keys, escapes other than \\ \" \/ \n
// \t and \r, and the plain scalars fastScalar leaves to nodeJSON.
func parseFast(data []byte) (docs []fastDoc, ok bool) {
	for _, c := range data {
		if c != '\n' && (c < ' ' || c > '~') {
			return nil, false
		}
	}
	var lines []fastLine
	flush := func() bool {
		if len(lines) == 0 {
			return true
		}
		p := fastParser{lines: lines}
		v, ok := p.block(lines[0].indent)
		m, isMap := v.(map[string]any)
		if !ok || !isMap || p.pos != len(lines) {
			return false
		}
		docs = append(docs, fastDoc{value: m, line: lines[0].num})
		lines = lines[:0:0]
		return true
	}
	text := string(data)
	for num := 1; text != ""; num++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case trimmed == "" || trimmed[0] == '#':
			continue
		case strings.TrimRight(line, " ") == "---":
			if !flush() {
				return nil, false
			}
			continue
		case strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") || line[0] == '%':
			return nil, false
		}
		lines = append(lines, fastLine{indent: len(line) - len(trimmed), text: trimmed, num: num})
	}
	if !flush() {
		return nil, false
	}
	return docs, true
}

// fastDoc is one document parseFast read: its value and the line of its
// first key.
type fastDoc struct {
	value map[string]any
	line  int
}

// fastLine is a line with content: its indentation in spaces, the rest,
// and its 1-based number.
type fastLine struct {
	indent int
	text   string
	num    int
}

type fastParser struct {
	lines []fastLine
	pos   int
	depth int
}

// maxFastDepth is how deeply parseFast nests collections, and maxFastKey
// how long a key it reads may be (go-yaml's limit of a key on one line is
// 1,024 bytes); beyond either, go-yaml decides.
const (
	maxFastDepth = 100
	maxFastKey   = 1000
)

// block reads the block node whose first line is the current one, indented
// by indent.
func (p *fastParser) block(indent int) (any, bool) {
	if p.depth++; p.depth > maxFastDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	if isItem(p.lines[p.pos].text) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

// isItem reports whether text starts a block sequence's item.
func isItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// next returns the line after the current value and whether there is one.
func (p *fastParser) next() (fastLine, bool) {
	if p.pos < len(p.lines) {
		return p.lines[p.pos], true
	}
	return fastLine{}, false
}

func (p *fastParser) mapping(indent int) (any, bool) {
	m := map[string]any{}
	for {
		l, more := p.next()
		if !more || l.indent < indent {
			return m, true
		}
		if l.indent > indent || isItem(l.text) {
			return nil, false
		}
		key, rest, ok := splitKey(l.text)
		if _, dup := m[key]; !ok || dup || key == "<<" {
			return nil, false
		}
		p.pos++
		if m[key], ok = p.value(indent, rest, true); !ok {
			return nil, false
		}
	}
}

// value reads the value that follows a key (inMapping) or a sequence's
// "- " on the line, rest, and on the lines after it.
func (p *fastParser) value(indent int, rest string, inMapping bool) (any, bool) {
	l, more := p.next()
	if rest != "" {
		if more && l.indent > indent {
			return nil, false // a scalar continued on the next line
		}
		return lineValue(rest)
	}
	switch {
	case more && l.indent > indent:
		return p.block(l.indent)
	case more && inMapping && l.indent == indent && isItem(l.text):
		return p.sequence(indent) // a sequence as indented as its key
	}
	return nil, true
}

func (p *fastParser) sequence(indent int) (any, bool) {
	s := []any{}
	for {
		l, more := p.next()
		if !more || l.indent < indent || l.indent == indent && !isItem(l.text) {
			return s, true
		}
		if l.indent > indent {
			return nil, false
		}
		rest := strings.TrimLeft(l.text[1:], " ")
		if rest != "" && rest[0] == '#' && l.text[1] == ' ' {
			rest = ""
		}
		if isItem(rest) || len(rest) > maxFastKey {
			return nil, false
		}
		if _, _, isKey := splitKey(rest); isKey {
			// "- key: value": a mapping indented by the column of its key.
			col := l.indent + len(l.text) - len(rest)
			p.lines[p.pos] = fastLine{indent: col, text: rest, num: l.num}
			v, ok := p.mapping(col)
			if !ok {
				return nil, false
			}
			s = append(s, v)
			continue
		}
		p.pos++
		v, ok := p.value(indent, uncomment(rest), false)
		if !ok {
			return nil, false
		}
		s = append(s, v)
	}
}

// splitKey splits "key: rest" into its key and the rest of the line
// (without a comment); ok is false when text is no such line, or its key
// is no string fastScalar reads.
func splitKey(text string) (key, rest string, ok bool) {
	if text == "" {
		return "", "", false
	}
	var after string
	if text[0] == '"' || text[0] == '\'' {
		s, n, ok := quoted(text)
		if !ok || !strings.HasPrefix(text[n:], ":") {
			return "", "", false
		}
		key, after = s, text[n+1:]
	} else {
		i := colon(text)
		if i < 0 {
			return "", "", false
		}
		v, ok := plain(strings.TrimRight(text[:i], " "))
		if key, ok = v.(string); !ok {
			return "", "", false
		}
		after = text[i+1:]
	}
	if after != "" && after[0] != ' ' || len(text)-len(after) > maxFastKey {
		return "", "", false
	}
	return key, uncomment(after), true
}

// colon is the index of the ':' that ends the plain key text starts with:
// the first followed by a space or the end of the line, before any comment;
// -1 when there is none.
func colon(text string) int {
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '#' && i > 0 && text[i-1] == ' ':
			return -1
		case text[i] == ':' && (i+1 == len(text) || text[i+1] == ' '):
			return i
		}
	}
	return -1
}

// uncomment trims the spaces around s and the comment that ends it.
func uncomment(s string) string {
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 && s[0] != '"' && s[0] != '\'' && s[0] != '{' && s[0] != '[' {
		s = s[:i]
	}
	return strings.TrimRight(s, " ")
}

// lineValue reads the scalar or flow collection that is the rest of a
// line (its comment removed, when it is a plain scalar).
func lineValue(s string) (any, bool) {
	switch s[0] {
	case '"', '\'', '{', '[':
		v, n, ok := flowValue(s, 0)
		if !ok || uncomment(s[n:]) != "" || n < len(s) && s[n] != ' ' {
			return nil, false
		}
		return v, true
	}
	if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return nil, false // a mapping where none may start
	}
	return plain(s)
}

// flowValue reads the value at s[i:] inside or as a flow collection and
// returns it with the index after it.
func flowValue(s string, i int) (any, int, bool) {
	return flowValueAt(s, i, 0)
}

func flowValueAt(s string, i, depth int) (any, int, bool) {
	i = skipSpaces(s, i)
	if i == len(s) || depth > maxFastDepth {
		return nil, i, false
	}
	switch s[i] {
	case '"', '\'':
		v, n, ok := quoted(s[i:])
		return v, i + n, ok
	case '{':
		return flowMapping(s, i+1, depth+1)
	case '[':
		return flowSequence(s, i+1, depth+1)
	}
	end := i
	for end < len(s) && !strings.ContainsRune(",[]{}:#?", rune(s[end])) {
		end++
	}
	v, ok := plain(strings.TrimRight(s[i:end], " "))
	return v, end, ok
}

func flowMapping(s string, i, depth int) (any, int, bool) {
	m := map[string]any{}
	if i = skipSpaces(s, i); i < len(s) && s[i] == '}' {
		return m, i + 1, true
	}
	for {
		k, n, ok := flowValueAt(s, i, depth)
		key, isString := k.(string)
		if _, dup := m[key]; !ok || !isString || dup || key == "<<" || len(key) > maxFastKey || !strings.HasPrefix(s[n:], ": ") {
			return nil, 0, false
		}
		if m[key], i, ok = flowValueAt(s, n+2, depth); !ok {
			return nil, 0, false
		}
		var done bool
		if i, done, ok = flowNext(s, i, '}'); !ok || done {
			return m, i, ok
		}
	}
}

func flowSequence(s string, i, depth int) (any, int, bool) {
	l := []any{}
	if i = skipSpaces(s, i); i < len(s) && s[i] == ']' {
		return l, i + 1, true
	}
	for {
		v, n, ok := flowValueAt(s, i, depth)
		if !ok {
			return nil, 0, false
		}
		l = append(l, v)
		var done bool
		if i, done, ok = flowNext(s, n, ']'); !ok || done {
			return l, i, ok
		}
	}
}

// flowNext reads what follows an entry of a flow collection that end
// closes: end, and it returns the index after it, or a comma, and it
// returns the index of the next entry. ok is false for anything else, and
// for a comma before end.
func flowNext(s string, i int, end byte) (next int, done, ok bool) {
	if i = skipSpaces(s, i); i == len(s) {
		return 0, false, false
	}
	switch s[i] {
	case end:
		return i + 1, true, true
	case ',':
		if i = skipSpaces(s, i+1); i < len(s) && s[i] == end {
			return 0, false, false // a trailing comma
		}
		return i, false, true
	}
	return 0, false, false
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// quoted reads the single- or double-quoted scalar s starts with, and
// returns its value and its length in s.
func quoted(s string) (string, int, bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			return b.String(), i + 1, true
		case c == '\\' && q == '"':
			if i+1 == len(s) {
				return "", 0, false
			}
			i++
			switch s[i] {
			case '\\', '"', '/':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				return "", 0, false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false // not closed on its line
}

// plain reads a plain scalar as fastScalar reads go-yaml's node of it,
// by the same rules (plainNull, plainBool, plainString, decimalInt), and
// reports false for every other scalar.
func plain(v string) (any, bool) {
	switch {
	case v == "":
		return nil, false
	case plainNull(v):
		return nil, true
	}
	if b, ok := plainBool(v); ok {
		return b, true
	}
	if plainString(v) {
		return v, true
	}
	if i, ok := decimalInt(v); ok {
		return i, true
	}
	return nil, false
}
