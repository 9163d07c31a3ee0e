package analyze

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestJSONTypesInOnePlace: every struct type of this package that the analysis
// JSON (or the what-if JSON) is made of is declared in analysis*.go, so that a
// reader finds the public JSON and its reference (the field comments,
// docs/analysis-json.md) in one place.
func TestJSONTypesInOnePlace(t *testing.T) {
	declared, err := declaringFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	g := jsonDocGen{docs: map[string]map[string]typeDoc{}, paths: map[reflect.Type][]string{}}
	g.walk(reflect.TypeOf(WhatIfDoc{}), "")
	own := reflect.TypeOf(Analysis{}).PkgPath()
	found := 0
	for _, typ := range g.order {
		if typ.PkgPath() != own {
			continue
		}
		found++
		file, ok := declared[typ.Name()]
		switch {
		case !ok:
			t.Errorf("type %s: no declaration found", typ.Name())
		case !strings.HasPrefix(file, "analysis"):
			t.Errorf("type %s of the analysis JSON is declared in %s: move it to analysis*.go", typ.Name(), file)
		}
	}
	if found < 10 || declared["Analysis"] != "analysis.go" {
		t.Fatalf("%d types of the JSON found, Analysis in %q: the walk is broken", found, declared["Analysis"])
	}
}

// declaringFiles maps each type declared in dir's non-test Go files to its file.
func declaringFiles(dir string) (map[string]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					out[s.(*ast.TypeSpec).Name.Name] = filepath.Base(name)
				}
			}
		}
	}
	return out, nil
}
