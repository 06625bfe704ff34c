// Callers ground truth for bench_languages.py (Go): go/types' resolution of every method call.
// Usage: GO111MODULE=off GOPATH=… go run lang_calls.go ROOT MODULE
// Each package folder under ROOT is type-checked from source (imports from source too; packages that are
// not here only leave their own names untyped). For each call `x.M()` that go/types resolves to a method
// declared under ROOT (promoted through embedding or not), prints: file, line, declaring file, Type.M.
package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	root, module := os.Args[1], os.Args[2]
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	filepath.Walk(root, func(dir string, info os.FileInfo, err error) error {
		if err != nil || !info.IsDir() {
			return nil
		}
		name := info.Name()
		if dir != root && (name[0] == '.' || name[0] == '_' || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, dir)
		path := module
		if rel != "." {
			path = module + "/" + filepath.ToSlash(rel)
		}
		// the package with its in-package tests (external _test packages are left out)
		check(fset, imp, root, dir, path, append(append([]string{}, pkg.GoFiles...), pkg.TestGoFiles...))
		return nil
	})
}

func check(fset *token.FileSet, imp types.Importer, root, dir, path string, names []string) {
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err == nil {
			files = append(files, f)
		}
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp, Error: func(error) {}}
	conf.Check(path, fset, files, info)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			s, ok := info.Selections[sel]
			if !ok || s.Kind() != types.MethodVal {
				return true
			}
			fn, ok := s.Obj().(*types.Func)
			if !ok || !fn.Pos().IsValid() {
				return true
			}
			decl := fset.Position(fn.Pos()).Filename
			if !strings.HasPrefix(decl, root) {
				return true
			}
			recv := fn.Type().(*types.Signature).Recv()
			if recv == nil {
				return true
			}
			t := recv.Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			named, ok := t.(*types.Named)
			if !ok || types.IsInterface(named) {
				return true // interface methods: no single definition to call
			}
			pos := fset.Position(call.Pos())
			callRel, _ := filepath.Rel(root, pos.Filename)
			declRel, _ := filepath.Rel(root, decl)
			fmt.Printf("%s\t%d\t%s\t%s.%s\n", callRel, pos.Line, declRel, named.Obj().Name(), fn.Name())
			return true
		})
	}
}
