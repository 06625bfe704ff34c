// Ground truth for bench_languages.py (Go): go/build's view of every package folder under ROOT.
// Usage: go run lang_truth.go ROOT MODULE   (prints one JSON object per package folder)
// For each folder: its import path, the Go files the build uses, and each import with the files it
// is written in (ImportPos, TestImportPos, XTestImportPos): the same reading `go build` does.
package main

import (
	"encoding/json"
	"go/build"
	"os"
	"path/filepath"
)

type pkg struct {
	ImportPath string
	GoFiles    []string
	Imports    map[string][]string // import path -> files importing it
}

func main() {
	root, module := os.Args[1], os.Args[2]
	ctx := build.Default
	ctx.CgoEnabled = false
	enc := json.NewEncoder(os.Stdout)
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || !info.IsDir() {
			return nil
		}
		name := info.Name()
		if path != root && (name[0] == '.' || name[0] == '_' || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		p, err := ctx.ImportDir(path, build.ImportComment)
		if err != nil && p == nil {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		out := pkg{ImportPath: module, GoFiles: p.GoFiles, Imports: map[string][]string{}}
		if rel != "." {
			out.ImportPath = module + "/" + filepath.ToSlash(rel)
		}
		for imp, pos := range p.ImportPos {
			for _, q := range pos {
				out.Imports[imp] = append(out.Imports[imp], q.Filename)
			}
		}
		for imp, pos := range p.TestImportPos {
			for _, q := range pos {
				out.Imports[imp] = append(out.Imports[imp], q.Filename)
			}
		}
		for imp, pos := range p.XTestImportPos {
			for _, q := range pos {
				out.Imports[imp] = append(out.Imports[imp], q.Filename)
			}
		}
		enc.Encode(out)
		return nil
	})
}
