package validate

import (
	"math"
	"reflect"
	"regexp"
	"slices"
	"unicode/utf8"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
)

// quickSchema answers one question fast: does kube-openapi's validator find
// nothing wrong with a value? Its check returns true only when it is sure
// that ValidateCustomResource would return no error; false means "not
// sure", and the caller then runs ValidateCustomResource, whose errors and
// messages are the API server's. Nearly every object is valid, and
// kube-openapi builds a new validator for every field of every object it
// checks (a third of validating an HTTPRoute); a quickSchema is built once.
//
// It decides only what the Gateway API schemas use, the way kube-openapi
// decides it (pkg/validation/validate): type, format, enum, pattern, string
// lengths, integer bounds and int32 range, item and property counts,
// required and additional properties, allOf and anyOf. Anything else (a
// null, a floating-point number, oneOf, not, uniqueItems, multipleOf,
// additionalProperties false, a pattern that does not compile, ...) makes the check say "not sure".
type quickSchema struct {
	// undecided is set when the schema uses something the check does not
	// decide: check is then always false.
	undecided bool
	// kind is the one JSON type the schema names, or "" for none.
	kind   string
	format string

	enum                       []any
	strEnum                    []string // the enum, when all its values are strings
	minLen, maxLen             int64    // -1 for none
	pattern                    *regexp.Regexp
	int32                      bool
	min, max                   *int64
	minExclusive, maxExclusive bool
	minItems, maxItems         int64
	items                      *quickSchema
	minProps, maxProps         int64
	properties                 map[string]*quickSchema
	required                   []string
	additional                 *quickSchema
	allOf, anyOf               []*quickSchema
}

// newQuickSchema compiles s, the schema kube-openapi validates against
// (apiservervalidation.NewSchemaValidator's), for check.
func newQuickSchema(s *spec.Schema) *quickSchema {
	q := &quickSchema{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
	p := &s.SchemaProps
	if p.Ref.String() != "" || p.Not != nil || len(p.OneOf) > 0 || len(p.PatternProperties) > 0 ||
		len(p.Dependencies) > 0 || p.AdditionalItems != nil || p.UniqueItems || p.MultipleOf != nil ||
		len(p.Type) > 1 || (p.Items != nil && len(p.Items.Schemas) > 0) ||
		(p.AdditionalProperties != nil && !p.AdditionalProperties.Allows) {
		return &quickSchema{undecided: true}
	}
	if len(p.Type) == 1 {
		q.kind = p.Type[0]
	}
	q.format = p.Format
	q.enum = p.Enum
	for _, e := range p.Enum {
		str, ok := e.(string)
		if !ok {
			q.strEnum = nil
			break
		}
		q.strEnum = append(q.strEnum, str)
	}
	q.minLen, q.maxLen = intOr(p.MinLength), intOr(p.MaxLength)
	if p.Pattern != "" {
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return &quickSchema{undecided: true}
		}
		q.pattern = re
	}
	if q.kind == "integer" {
		q.int32 = p.Format == "int32"
		var ok bool
		if q.min, ok = intBound(p.Minimum); !ok {
			return &quickSchema{undecided: true}
		}
		if q.max, ok = intBound(p.Maximum); !ok {
			return &quickSchema{undecided: true}
		}
		q.minExclusive, q.maxExclusive = p.ExclusiveMinimum, p.ExclusiveMaximum
	} else if p.Minimum != nil || p.Maximum != nil {
		return &quickSchema{undecided: true}
	}
	q.minItems, q.maxItems = intOr(p.MinItems), intOr(p.MaxItems)
	if p.Items != nil && p.Items.Schema != nil {
		q.items = newQuickSchema(p.Items.Schema)
	}
	q.minProps, q.maxProps = intOr(p.MinProperties), intOr(p.MaxProperties)
	if len(p.Properties) > 0 {
		q.properties = make(map[string]*quickSchema, len(p.Properties))
		for name, prop := range p.Properties {
			q.properties[name] = newQuickSchema(&prop)
		}
	}
	q.required = p.Required
	if ap := p.AdditionalProperties; ap != nil && ap.Schema != nil {
		q.additional = newQuickSchema(ap.Schema)
	}
	for i := range p.AllOf {
		q.allOf = append(q.allOf, newQuickSchema(&p.AllOf[i]))
	}
	for i := range p.AnyOf {
		q.anyOf = append(q.anyOf, newQuickSchema(&p.AnyOf[i]))
	}
	return q
}

// intOr returns *p, or -1 when p is nil.
func intOr(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// intBound converts a minimum or maximum of an integer schema; ok is false
// when it is not a whole number within int32's range, where kube-openapi
// would compare it differently than as an int64.
func intBound(b *float64) (_ *int64, ok bool) {
	if b == nil {
		return nil, true
	}
	if *b != math.Trunc(*b) || *b > math.MaxInt32 || *b < math.MinInt32 {
		return nil, false
	}
	v := int64(*b)
	return &v, true
}

// check reports whether kube-openapi's validator would find no error in v;
// false when it would, or when q cannot tell.
func (q *quickSchema) check(v any) bool {
	if q.undecided {
		return false
	}
	switch v := v.(type) {
	case string:
		if !q.checkString(v) {
			return false
		}
	case int64:
		if !q.checkInt(v) {
			return false
		}
	case bool:
		if q.kind != "boolean" || q.format != "" || q.enum != nil {
			return false
		}
	case map[string]any:
		if !q.checkObject(v) {
			return false
		}
	case []any:
		if !q.checkArray(v) {
			return false
		}
	default: // null, floating-point numbers and anything else: not sure
		return false
	}
	for _, s := range q.allOf {
		if !s.check(v) {
			return false
		}
	}
	if len(q.anyOf) > 0 && !slices.ContainsFunc(q.anyOf, func(s *quickSchema) bool { return s.check(v) }) {
		return false
	}
	return true
}

func (q *quickSchema) checkString(v string) bool {
	// A string passes the type check of a string schema and of one that
	// names no type.
	if q.kind != "string" && q.kind != "" {
		return false
	}
	if q.enum != nil && !q.inEnum(v) {
		return false
	}
	if q.minLen >= 0 || q.maxLen >= 0 {
		n := int64(utf8.RuneCountInString(v))
		if q.minLen >= 0 && n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
			return false
		}
	}
	if q.pattern != nil && !q.pattern.MatchString(v) {
		return false
	}
	if q.format != "" && strfmt.Default.ContainsName(q.format) && !strfmt.Default.Validates(q.format, v) {
		return false
	}
	return true
}

func (q *quickSchema) checkInt(v int64) bool {
	if q.kind != "integer" || (q.format != "" && q.format != "int32" && q.format != "int64") {
		return false
	}
	if q.enum != nil && !q.inEnum(v) {
		return false
	}
	if q.int32 && (v > math.MaxInt32 || v < math.MinInt32) {
		return false
	}
	if q.min != nil && (v < *q.min || q.minExclusive && v == *q.min) {
		return false
	}
	if q.max != nil && (v > *q.max || q.maxExclusive && v == *q.max) {
		return false
	}
	return true
}

func (q *quickSchema) checkObject(v map[string]any) bool {
	if q.kind != "object" || q.format != "" || q.enum != nil {
		return false
	}
	n := int64(len(v))
	if q.minProps >= 0 && n < q.minProps || q.maxProps >= 0 && n > q.maxProps {
		return false
	}
	for _, k := range q.required {
		if _, ok := v[k]; !ok {
			return false
		}
	}
	for k, e := range v {
		s := q.properties[k]
		if s == nil {
			s = q.additional
		}
		if s != nil && !s.check(e) {
			return false
		}
	}
	return true
}

func (q *quickSchema) checkArray(v []any) bool {
	if q.kind != "array" || q.format != "" || q.enum != nil {
		return false
	}
	n := int64(len(v))
	if q.minItems >= 0 && n < q.minItems || q.maxItems >= 0 && n > q.maxItems {
		return false
	}
	if q.items != nil {
		for _, e := range v {
			if !q.items.check(e) {
				return false
			}
		}
	}
	return true
}

// inEnum reports whether v is one of the enum's values, compared as
// kube-openapi compares them: v converted to the type of each value, when
// it converts.
func (q *quickSchema) inEnum(v any) bool {
	if s, ok := v.(string); ok && q.strEnum != nil {
		return slices.Contains(q.strEnum, s)
	}
	value := reflect.ValueOf(v)
	for _, e := range q.enum {
		t := reflect.TypeOf(e)
		if t != nil && value.Type().ConvertibleTo(t) && reflect.DeepEqual(value.Convert(t).Interface(), e) {
			return true
		}
	}
	return false
}
