package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// docs/design.md shows the packages and the arrows between them (each package's
// imports of the module's other packages, test files aside) in one block that this
// test compares with go list, so that the map stays true (issue 32): a package or
// an arrow added or removed in the code and not in the document fails it, named.

const (
	designPath = "../../docs/design.md"
	// designMarker precedes the checked block, a ```text fence of lines
	// "package → import import ...", or "package" alone for one that imports none
	// of the module's packages.
	designMarker = "<!-- packages and imports: checked against go list by cmd/ceiling TestDesignMatchesGoList -->"
	modulePrefix = "github.com/ceiling-llm/ceiling/"
)

func TestDesignMatchesGoList(t *testing.T) {
	want, err := goListGraph()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(designPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseDesignGraph(string(data))
	if err != nil {
		t.Fatalf("%s: %v", designPath, err)
	}
	diffs := diffGraphs(got, want)
	for _, d := range diffs {
		t.Errorf("%s: %s", designPath, d)
	}
	if len(diffs) > 0 {
		t.Logf("the block as go list has it (packages by floor, the lowest first):\n%s", formatGraph(want))
	}
}

// TestDiffGraphsNamesEachDifference checks the comparison on graphs of its own: a
// package or an arrow missing on either side is named, and equal graphs give none.
func TestDiffGraphsNamesEachDifference(t *testing.T) {
	code := map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": nil, "new": {"a"}}
	doc, err := parseDesignGraph(designMarker + "\n```text\na → b\nb → c x\nc\nold → c\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(diffGraphs(doc, code), "\n")
	for _, want := range []string{
		"lacks the package new (go list has it, importing a)",
		"lists the package old, which go list does not have",
		"lacks the arrow a → c",
		"shows the arrow b → x, which go list does not have",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("differences do not say %q:\n%s", want, got)
		}
	}
	if d := diffGraphs(code, code); len(d) != 0 {
		t.Errorf("a graph differs from itself: %v", d)
	}
	back, err := parseDesignGraph(designMarker + "\n```text\n" + formatGraph(code) + "```\n")
	if err != nil || len(diffGraphs(back, code)) != 0 {
		t.Errorf("formatGraph does not read back as the same graph (%v):\n%s", err, formatGraph(code))
	}
}

// goListGraph is the module's packages, each with the module's packages its
// non-test files import, names relative to the module.
func goListGraph() (map[string][]string, error) {
	out, err := exec.Command("go", "list", "-json", "../../...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -json: %v", err)
	}
	g := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list -json: %v", err)
		}
		name, ok := strings.CutPrefix(p.ImportPath, modulePrefix)
		if !ok {
			continue
		}
		g[name] = nil
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, modulePrefix); ok {
				g[name] = append(g[name], dep)
			}
		}
	}
	return g, nil
}

// parseDesignGraph reads the checked block of a design document.
func parseDesignGraph(doc string) (map[string][]string, error) {
	i := strings.Index(doc, designMarker)
	if i < 0 {
		return nil, fmt.Errorf("no block of packages after %q", designMarker)
	}
	rest := strings.TrimLeft(doc[i+len(designMarker):], "\n")
	body, ok := strings.CutPrefix(rest, "```text\n")
	if !ok {
		return nil, fmt.Errorf("the line after %q does not open a ```text block", designMarker)
	}
	end := strings.Index(body, "```")
	if end < 0 {
		return nil, fmt.Errorf("the block of packages is not closed")
	}
	g := map[string][]string{}
	for n, line := range strings.Split(strings.TrimRight(body[:end], "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		from, to, _ := strings.Cut(line, "→")
		fields := strings.Fields(from)
		if len(fields) != 1 {
			return nil, fmt.Errorf("line %d of the block of packages, %q: want \"package → import ...\"", n+1, line)
		}
		if _, dup := g[fields[0]]; dup {
			return nil, fmt.Errorf("the block of packages lists %s twice", fields[0])
		}
		g[fields[0]] = strings.Fields(to)
	}
	return g, nil
}

// diffGraphs says how the document's graph doc differs from the code's, one line
// per package or arrow.
func diffGraphs(doc, code map[string][]string) []string {
	var out []string
	for _, p := range sortedKeys(code) {
		if _, ok := doc[p]; !ok {
			imports := "none of the module's packages"
			if len(code[p]) > 0 {
				imports = strings.Join(code[p], ", ")
			}
			out = append(out, fmt.Sprintf("lacks the package %s (go list has it, importing %s)", p, imports))
			continue
		}
		for _, dep := range code[p] {
			if !slices.Contains(doc[p], dep) {
				out = append(out, fmt.Sprintf("lacks the arrow %s → %s", p, dep))
			}
		}
		for _, dep := range doc[p] {
			if !slices.Contains(code[p], dep) {
				out = append(out, fmt.Sprintf("shows the arrow %s → %s, which go list does not have", p, dep))
			}
		}
	}
	for _, p := range sortedKeys(doc) {
		if _, ok := code[p]; !ok {
			out = append(out, fmt.Sprintf("lists the package %s, which go list does not have", p))
		}
	}
	return out
}

// formatGraph writes g as the document's block: packages by floor (0: imports
// none of the module's packages; otherwise one above its highest import), then
// by name, a blank line between floors.
func formatGraph(g map[string][]string) string {
	floor := map[string]int{}
	var floorOf func(p string, seen map[string]bool) int
	floorOf = func(p string, seen map[string]bool) int {
		if f, ok := floor[p]; ok {
			return f
		}
		if seen[p] { // a cycle: go list would have refused it; do not loop
			return 0
		}
		seen[p] = true
		f := 0
		for _, d := range g[p] {
			f = max(f, floorOf(d, seen)+1)
		}
		floor[p] = f
		return f
	}
	names := sortedKeys(g)
	for _, p := range names {
		floorOf(p, map[string]bool{})
	}
	sort.SliceStable(names, func(i, j int) bool { return floor[names[i]] < floor[names[j]] })
	width := 0
	for _, p := range names {
		width = max(width, len(p))
	}
	var b strings.Builder
	for i, p := range names {
		if i > 0 && floor[p] != floor[names[i-1]] {
			b.WriteString("\n") // a blank line between floors
		}
		deps := append([]string(nil), g[p]...)
		sort.Strings(deps)
		if len(deps) == 0 {
			b.WriteString(p + "\n")
			continue
		}
		fmt.Fprintf(&b, "%-*s → %s\n", width, p, strings.Join(deps, " "))
	}
	return b.String()
}

func sortedKeys(g map[string][]string) []string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestNamedFilesExist: a comment or document that names a Go file by its path
// ("analyze/policy_kvlayout.go") names one that exists, from the repository root
// or the naming file's directory, so that a renamed file does not leave readers
// looking for the old name.
func TestNamedFilesExist(t *testing.T) {
	const root = "../.."
	named := regexp.MustCompile(`\b[a-z]+(/[a-z_]+)*/[A-Za-z0-9_]+\.go\b`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for n, line := range strings.Split(string(data), "\n") {
			for _, name := range named.FindAllString(line, -1) {
				if _, err := os.Stat(filepath.Join(root, name)); err == nil {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), name)); err == nil {
					continue
				}
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d names %s, which does not exist", rel, n+1, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
