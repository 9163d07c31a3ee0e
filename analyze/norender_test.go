package analyze

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The analysis computes and package analysistext renders (issue 32): no file of
// this package lays out text. A file that imports a table writer, declares a
// function that takes somewhere to write to (an io.Writer, a *strings.Builder, a
// *bytes.Buffer) or a Markdown switch (md bool), or prints with fmt.Fprint* or
// io.WriteString is rendering, and belongs in analysistext. Building a sentence
// of the data (a warning, a note) with fmt.Sprintf is computing.

// TestAnalysisRendersNothing fails naming each place in this package's non-test
// files that renders.
func TestAnalysisRendersNothing(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, r := range rendering(fset, f) {
			t.Errorf("%s renders text; move it to package analysistext", r)
		}
	}
	if checked == 0 {
		t.Fatal("no source file found to check")
	}
}

// TestRenderingFound checks the checker on sources of its own: each way of
// rendering is found, computing a sentence is not.
func TestRenderingFound(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"tabwriter", `import "text/tabwriter"; var _ tabwriter.Writer`, 1},
		{"builder parameter", `import "strings"; func writeX(b *strings.Builder) { b.WriteString("x") }`, 1},
		{"writer parameter", `import "io"; func write(w io.Writer, a int) error { return nil }`, 1},
		{"buffer parameter", `import "bytes"; func f(b *bytes.Buffer) {}`, 1},
		{"markdown switch", `func f(s string, md bool) string { return s }`, 1},
		{"method with a writer", `import "io"; type t struct{}; func (t) write(w io.Writer) {}`, 1},
		{"Fprintf", `import ("fmt"; "os"); func f() { fmt.Fprintf(os.Stdout, "x") }`, 1},
		{"Fprintln and WriteString", `import ("fmt"; "io"; "os"); func f() { fmt.Fprintln(os.Stdout); io.WriteString(os.Stdout, "x") }`, 2},
		{"a sentence of the data", `import ("fmt"; "strings"); func warn(n int) string { var b strings.Builder; b.WriteString(fmt.Sprintf("%d levels", n)); return b.String() }`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package x; "+tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := rendering(fset, f); len(got) != tc.want {
				t.Errorf("found %d (%q), want %d", len(got), got, tc.want)
			}
		})
	}
}

// rendering lists where f renders text, each as file:line and what.
func rendering(fset *token.FileSet, f *ast.File) []string {
	var out []string
	at := func(n ast.Node, what string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+what)
	}
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndexByte(path, '/')+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
		if path == "text/tabwriter" {
			at(im, "imports text/tabwriter")
		}
	}
	// qualified is "io.Writer" for the selector expression io.Writer (by import path).
	qualified := func(e ast.Expr) string {
		if s, ok := e.(*ast.StarExpr); ok {
			e = s.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || imports[pkg.Name] == "" {
			return ""
		}
		return imports[pkg.Name] + "." + sel.Sel.Name
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncType:
			for _, p := range n.Params.List {
				switch q := qualified(p.Type); q {
				case "io.Writer", "strings.Builder", "bytes.Buffer":
					at(p, "takes a "+q+" to write to")
				}
				if id, ok := p.Type.(*ast.Ident); ok && id.Name == "bool" {
					for _, name := range p.Names {
						if name.Name == "md" {
							at(p, "takes a Markdown switch (md bool)")
						}
					}
				}
			}
		case *ast.CallExpr:
			switch q := qualified(n.Fun); q {
			case "fmt.Fprint", "fmt.Fprintf", "fmt.Fprintln", "io.WriteString":
				at(n, "prints with "+q)
			}
		}
		return true
	})
	return out
}
