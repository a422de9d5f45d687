package testkit

import (
	"fmt"
	"go/ast"
	"slices"
	"strconv"
	"strings"
)

const goleakPath = "go.uber.org/goleak"

func docProblems(pkgs map[string]*pkgFiles) (out []string) {
	for _, dir := range sortedKeys(pkgs) {
		p := pkgs[dir]
		if len(p.sources) == 0 {
			continue // only tests, or only generated code
		}
		if !slices.ContainsFunc(p.sources, func(f *ast.File) bool { return f.Doc != nil }) {
			out = append(out, fmt.Sprintf("the package in %s has no package doc comment", dir))
		}
	}
	return out
}

func importProblems(pkgs map[string]*pkgFiles, module string, allowed []string, exceptions map[string]string) (out []string) {
	allowed = append([]string{module}, allowed...)
	for _, dir := range sortedKeys(pkgs) {
		for _, f := range pkgs[dir].all {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if _, known := exceptions[path]; !known && strings.HasPrefix(path, Tree) && !slices.ContainsFunc(allowed, func(a string) bool { return within(path, a) }) {
					out = append(out, fmt.Sprintf("%s imports %s: %s may import only its own packages and %v (services talk over the bus)",
						dir, path, module, allowed[1:]))
				}
			}
		}
	}
	return out
}

// within reports whether the package path is prefix or below it.
func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, strings.TrimSuffix(prefix, "/")+"/")
}

func leakProblems(pkgs map[string]*pkgFiles) (out []string) {
	for _, dir := range sortedKeys(pkgs) {
		p := pkgs[dir]
		if len(p.tests) == 0 {
			continue
		}
		hasMain, verifies := false, false
		for _, f := range p.tests {
			hasMain = hasMain || declaresTestMain(f)
			verifies = verifies || callsVerifyTestMain(f)
		}
		if !hasMain || !verifies {
			out = append(out, fmt.Sprintf("the tests in %s have no TestMain that calls goleak.VerifyTestMain", dir))
		}
	}
	return out
}

func declaresTestMain(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "TestMain" {
			return true
		}
	}
	return false
}

// callsVerifyTestMain reports whether f calls VerifyTestMain of the goleak
// package, under whatever name f imports it.
func callsVerifyTestMain(f *ast.File) bool {
	name := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == goleakPath {
			name = "goleak"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return false
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "VerifyTestMain" {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ErrorKey is the one key under which gatewire logs an error.
const ErrorKey = "error"

// logMethods are the slog calls whose arguments are key-value pairs.
var logMethods = map[string]bool{"Debug": true, "Info": true, "Warn": true, "Error": true,
	"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true, "Log": true, "With": true}

// errorKeyProblems finds log calls that name an error under another key
// than ErrorKey ("err", "e", "cause"), so that one query finds every error
// of every service.
func errorKeyProblems(pkgs map[string]*pkgFiles) (out []string) {
	for _, dir := range sortedKeys(pkgs) {
		for _, f := range pkgs[dir].sources {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !logMethods[sel.Sel.Name] {
					return true
				}
				for _, arg := range call.Args {
					if lit, ok := arg.(*ast.BasicLit); ok {
						if key, _ := strconv.Unquote(lit.Value); key == "err" || key == "cause" {
							out = append(out, fmt.Sprintf("%s: %s logs an error under %q; the key is %q", dir, sel.Sel.Name, key, ErrorKey))
						}
					}
				}
				return true
			})
		}
	}
	return out
}
