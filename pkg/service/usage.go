package service

import (
	"fmt"
	"io"
	"reflect"
	"text/tabwriter"
)

// Usage writes to w a table of the variables cfgs read (pointers to
// structs with envconfig tags, embedded structs included): name, type,
// default and description, each variable once.
//
// It reads the tags itself rather than calling envconfig.Usage, whose
// text/template makes the linker keep every exported method of every type
// in the binary (a third of its size, and of its resident memory).
func Usage(w io.Writer, cfgs ...any) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tTYPE\tDEFAULT\tDESCRIPTION")
	for _, v := range Variables(cfgs...) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.Type, v.Default, v.Description)
	}
	return tw.Flush()
}

// Variable is one environment variable a configuration reads.
type Variable struct {
	// Name has the GATEWIRE_ prefix.
	Name string
	// Type is for people: string, int, bool, duration, list of string.
	Type        string
	Default     string
	Description string
}

// Variables lists the variables cfgs read (pointers to structs with
// envconfig tags, embedded structs included), each once, in field order.
func Variables(cfgs ...any) []Variable {
	var out []Variable
	seen := map[string]bool{}
	for _, cfg := range cfgs {
		for _, v := range variables(reflect.TypeOf(cfg).Elem()) {
			if !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// variables lists the variables of the struct type t in field order.
func variables(t reflect.Type) []Variable {
	var out []Variable
	for f := range t.Fields() {
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, variables(f.Type)...)
			continue
		}
		name := f.Tag.Get("envconfig")
		if name == "" || !f.IsExported() {
			continue
		}
		out = append(out, Variable{
			Name:        Prefix + "_" + name,
			Type:        typeName(f.Type),
			Default:     f.Tag.Get("default"),
			Description: f.Tag.Get("desc"),
		})
	}
	return out
}

// typeName names a variable's type for people: duration rather than
// time.Duration, list for a slice.
func typeName(t reflect.Type) string {
	switch {
	case t.PkgPath() == "time" && t.Name() == "Duration":
		return "duration"
	case t.Kind() == reflect.Slice:
		return "list of " + typeName(t.Elem())
	default:
		return t.Kind().String()
	}
}
