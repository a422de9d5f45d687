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
	seen := map[string]bool{}
	for _, cfg := range cfgs {
		for _, v := range variables(reflect.TypeOf(cfg).Elem()) {
			if !seen[v.name] {
				seen[v.name] = true
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.name, v.typ, v.def, v.desc)
			}
		}
	}
	return tw.Flush()
}

// variable is one environment variable of a configuration.
type variable struct{ name, typ, def, desc string }

// variables lists the variables of the struct type t in field order.
func variables(t reflect.Type) []variable {
	var out []variable
	for f := range t.Fields() {
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, variables(f.Type)...)
			continue
		}
		name := f.Tag.Get("envconfig")
		if name == "" || !f.IsExported() {
			continue
		}
		out = append(out, variable{
			name: Prefix + "_" + name,
			typ:  typeName(f.Type),
			def:  f.Tag.Get("default"),
			desc: f.Tag.Get("desc"),
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
