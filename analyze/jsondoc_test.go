package analyze

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The reference part of docs/analysis-json.md is generated from the analysis'
// types: every JSON key of Analysis, by reflection, with the Go doc comment of its
// field, so that the public JSON's reference cannot drift from the code (issue 32).
// Run `go test ./analyze -run TestAnalysisJSONDoc -update` after changing a type.

const (
	jsonDocPath  = "../docs/analysis-json.md"
	jsonDocBegin = "<!-- Generated from the analysis' types by go test ./analyze -run TestAnalysisJSONDoc -update; do not edit by hand. -->"
	jsonDocEnd   = "<!-- End of the generated reference. -->"
	modulePath   = "github.com/ceiling-llm/ceiling/"
)

// TestAnalysisJSONDoc fails when the generated reference in docs/analysis-json.md
// is not what the types give, naming every key it lacks or has too many.
func TestAnalysisJSONDoc(t *testing.T) {
	want, err := jsonReference(reflect.TypeOf(Analysis{}))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(jsonDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin, end := strings.Index(doc, jsonDocBegin), strings.Index(doc, jsonDocEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no generated reference between %q and %q", jsonDocPath, jsonDocBegin, jsonDocEnd)
	}
	got := doc[begin+len(jsonDocBegin) : end]
	if got == want {
		return
	}
	if *update {
		doc = doc[:begin+len(jsonDocBegin)] + want + doc[end:]
		if err := os.WriteFile(jsonDocPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantKeys, gotKeys := referenceKeys(want), referenceKeys(got)
	for _, k := range wantKeys {
		if !slices.Contains(gotKeys, k) {
			t.Errorf("%s does not name the key %s", jsonDocPath, k)
		}
	}
	for _, k := range gotKeys {
		if !slices.Contains(wantKeys, k) {
			t.Errorf("%s names the key %s, which the types no longer have", jsonDocPath, k)
		}
	}
	t.Errorf("%s is stale (keys, types or doc comments changed): run go test ./analyze -run TestAnalysisJSONDoc -update and review the diff", jsonDocPath)
}

// TestJSONReferenceNamesEveryKey checks the generator on a type of its own: every
// key, an embedded struct's keys inline, "-" and unexported fields left out, doc
// and line comments both read.
func TestJSONReferenceNamesEveryKey(t *testing.T) {
	ref, err := jsonReference(reflect.TypeOf(jsonDocFixture{}))
	if err != nil {
		t.Fatal(err)
	}
	keys := referenceKeys(ref)
	want := []string{"jsonDocFixture.a", "jsonDocFixture.b", "jsonDocFixture.inner", "jsonDocFixture.List", "jsonDocFixture.embedded_key",
		"jsonDocInner.x"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("keys %v, want %v", keys, want)
	}
	for _, s := range []string{"A is the first.", "the second, a line comment", "array of object (jsonDocInner)", "X is inside.", "| `b` | string or null |", "At `inner`, `List[]`."} {
		if !strings.Contains(ref, s) {
			t.Errorf("reference lacks %q:\n%s", s, ref)
		}
	}
}

// jsonDocFixture is a type for TestJSONReferenceNamesEveryKey.
type jsonDocFixture struct {
	// A is the first.
	A      int           `json:"a"`
	B      *string       `json:"b,omitempty"` // the second, a line comment
	Inner  *jsonDocInner `json:"inner"`
	List   []jsonDocInner
	Hidden string `json:"-"`
	jsonDocEmbedded
}

type jsonDocInner struct {
	// X is inside.
	X float64 `json:"x"`
}

type jsonDocEmbedded struct {
	E bool `json:"embedded_key"`
}

// referenceKeys lists the "Type.key" names a generated reference holds, from its
// headings and its tables' first column.
func referenceKeys(ref string) []string {
	heading := regexp.MustCompile("^### `([A-Za-z0-9_.]+)`")
	row := regexp.MustCompile("^\\| `([^`]+)` \\|")
	var keys []string
	typ := ""
	for _, line := range strings.Split(ref, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			typ = m[1]
			if i := strings.LastIndexByte(typ, '.'); i >= 0 {
				typ = typ[i+1:]
			}
		} else if m := row.FindStringSubmatch(line); m != nil && typ != "" {
			keys = append(keys, typ+"."+m[1])
		}
	}
	return keys
}

// jsonReference writes the reference of root: one table per struct type reachable
// from it, in the order first reached, each key with its JSON type and the doc
// comment of its field.
func jsonReference(root reflect.Type) (string, error) {
	g := jsonDocGen{docs: map[string]map[string]typeDoc{}, paths: map[reflect.Type][]string{}}
	g.walk(root, "")
	var b strings.Builder
	b.WriteString("\n")
	for _, t := range g.order {
		td, err := g.doc(t)
		if err != nil {
			return "", err
		}
		name := t.Name()
		if t.PkgPath() != g.order[0].PkgPath() {
			name = filepath.Base(t.PkgPath()) + "." + name
		}
		fmt.Fprintf(&b, "\n### `%s`\n\n", name)
		if td.doc != "" {
			b.WriteString(td.doc + "\n\n")
		}
		if paths := g.paths[t]; len(paths) > 0 && paths[0] != "" {
			quoted := make([]string, len(paths))
			for i, p := range paths {
				quoted[i] = "`" + p + "`"
			}
			fmt.Fprintf(&b, "At %s.\n\n", strings.Join(quoted, ", "))
		}
		b.WriteString("| key | type | meaning |\n|---|---|---|\n")
		for _, f := range jsonFields(t) {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.key, jsonTypeName(f.typ), cell(td.fields[f.goName]))
		}
	}
	b.WriteString("\n")
	return b.String(), nil
}

type jsonDocGen struct {
	order []reflect.Type
	paths map[reflect.Type][]string
	docs  map[string]map[string]typeDoc // package path → type name → its docs
}

// typeDoc is a type's doc comment and its fields' comments by Go field name.
type typeDoc struct {
	doc    string
	fields map[string]string
}

// jsonField is one key of a struct's JSON, embedded structs' keys inline.
type jsonField struct {
	key, goName string
	typ         reflect.Type
}

// jsonFields lists the keys encoding/json writes for struct t.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{key: name, goName: f.Name, typ: f.Type})
	}
	return out
}

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// walk records the struct types reachable from t and the key paths they are at.
func (g *jsonDocGen) walk(t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		if t == rawType {
			return
		}
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			path += "[]"
		} else if t.Kind() == reflect.Map {
			path += "{}"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType {
		return
	}
	_, seen := g.paths[t]
	g.paths[t] = append(g.paths[t], path)
	if seen {
		return
	}
	g.order = append(g.order, t)
	for _, f := range jsonFields(t) {
		p := f.key
		if path != "" {
			p = path + "." + f.key
		}
		g.walk(f.typ, p)
	}
}

// jsonTypeName says what JSON a Go type is written as.
func jsonTypeName(t reflect.Type) string {
	switch {
	case t == rawType:
		return "any JSON"
	case t == timeType:
		return "string (RFC 3339 time)"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonTypeName(t.Elem()) + " or null"
	case reflect.Slice, reflect.Array:
		return "array of " + jsonTypeName(t.Elem())
	case reflect.Map:
		return "object of " + jsonTypeName(t.Elem())
	case reflect.Struct:
		return "object (" + t.Name() + ")"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Interface:
		return "any JSON"
	}
	return "number"
}

// doc returns the comments of struct type t, parsing its package's sources once.
func (g *jsonDocGen) doc(t reflect.Type) (typeDoc, error) {
	pkg := t.PkgPath()
	if _, ok := g.docs[pkg]; !ok {
		dir := "."
		if rel, ok := strings.CutPrefix(pkg, modulePath); ok && rel != "analyze" {
			dir = filepath.Join("..", filepath.FromSlash(rel))
		} else if !ok && pkg != strings.TrimSuffix(modulePath, "/")+"/analyze" {
			return typeDoc{}, fmt.Errorf("type %s is not of this module: its comments cannot be read", t)
		}
		docs, err := parseTypeDocs(dir)
		if err != nil {
			return typeDoc{}, err
		}
		g.docs[pkg] = docs
	}
	return g.docs[pkg][t.Name()], nil
}

// parseTypeDocs reads the doc comments of the struct types declared in dir's Go
// files (test files included: the generator's own fixture is one).
func parseTypeDocs(dir string) (map[string]typeDoc, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := map[string]typeDoc{}
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				td := typeDoc{doc: oneLine(doc), fields: map[string]string{}}
				for _, fl := range st.Fields.List {
					text := strings.TrimSpace(oneLine(fl.Doc) + " " + oneLine(fl.Comment))
					for _, n := range fl.Names {
						td.fields[n.Name] = text
					}
				}
				out[ts.Name.Name] = td
			}
		}
	}
	return out, nil
}

// oneLine is a comment group's text as one line.
func oneLine(c *ast.CommentGroup) string {
	if c == nil {
		return ""
	}
	return strings.Join(strings.Fields(c.Text()), " ")
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
