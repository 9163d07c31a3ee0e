package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLibraryErrorsNameFieldsNotFlags: below cmd (in every package but a main
// package, which owns its flags), an error names the field that
// was wrong (Options.URL), never a flag (--url): the library has no flags, and
// cmd rewrites the field names into its own (recordError, flagError,
// guardError). Every errors.New and fmt.Errorf format outside cmd is read from the
// source; one that names a ceiling flag fails, while another tool's flags (the
// advice to rerun vllm bench serve with --save-result) are allowed by name.
func TestLibraryErrorsNameFieldsNotFlags(t *testing.T) {
	otherTools := map[string]bool{"--results-dir": true, "--save-result": true, "--save-detailed": true}
	flag := regexp.MustCompile(`--[a-z][a-z-]+`)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "cmd" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			// A command of its own (deploy/image's builder) names its own flags,
			// as cmd/ceiling does: the rule is the libraries'.
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !(pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			msg, _ := strconv.Unquote(lit.Value)
			checked++
			for _, m := range flag.FindAllString(msg, -1) {
				if !otherTools[m] {
					t.Errorf("%s: error %q names the flag %s; name the field, and map it in cmd", fset.Position(lit.Pos()), msg, m)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("read only %d error messages outside cmd; the walk missed the packages", checked)
	}
}
