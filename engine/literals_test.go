package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEngineNamesAreSpelledHere: an engine's name is written as a string literal
// only in this package, the test engine that imitates the engines, and the
// importer (whose other tools name their backends in their own words); everywhere
// else it is engine.VLLM, engine.SGLang, ... (issue 32: one vocabulary, at most two
// packages besides the test engine).
func TestEngineNamesAreSpelledHere(t *testing.T) {
	names := map[string]bool{}
	for _, e := range All() {
		names[string(e.Name)] = true
	}
	allowed := []string{"engine", "importer", "record/enginetest"}
	found := map[string][]string{}
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && names[v] {
					found[filepath.ToSlash(rel)] = append(found[filepath.ToSlash(rel)], filepath.Base(path)+": "+lit.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found["engine"]) == 0 {
		t.Fatal("no engine name found even in package engine: the walk is broken")
	}
	for pkg, where := range found {
		if !slices.Contains(allowed, pkg) {
			t.Errorf("package %s spells engine names as literals: %v; use the engine.Name constants", pkg, where)
		}
	}
}
