package trace

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestColumnsMatchTags checks that every parquet tag of Row and MetricSample has its
// constant in columns.go, in field order, and that columns.go holds no constant
// without a field: a schema change is one edit, and a forgotten half fails here.
func TestColumnsMatchTags(t *testing.T) {
	consts := columnConsts(t, "columns.go")
	for _, tc := range []struct {
		typ    any
		prefix string
	}{
		{Row{}, "Col"},
		{MetricSample{}, "Sample"},
	} {
		typ := reflect.TypeOf(tc.typ)
		var tags []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
			if name == "" {
				t.Errorf("%s.%s has no parquet tag", typ.Name(), f.Name)
				continue
			}
			tags = append(tags, name)
		}
		var values []string
		for _, c := range consts {
			if strings.HasPrefix(c[0], tc.prefix) {
				values = append(values, c[1])
			}
		}
		if !slices.Equal(tags, values) {
			t.Errorf("%s's parquet tags\n  %v\ndiffer from the %s* constants of columns.go\n  %v",
				typ.Name(), tags, tc.prefix, values)
		}
	}
	for _, c := range consts {
		if !strings.HasPrefix(c[0], "Col") && !strings.HasPrefix(c[0], "Sample") {
			t.Errorf("constant %s in columns.go is neither a Col* nor a Sample* column", c[0])
		}
	}
}

// columnConsts returns the constants of file as [name, value] in source order.
func columnConsts(t *testing.T, file string) [][2]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("constant %s is not a string literal", n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				out = append(out, [2]string{n.Name, v})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no constants found in %s", file)
	}
	return out
}
