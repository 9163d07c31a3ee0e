package analyze

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoEngineMetricNames: package engine is the one home of every engine's
// /metrics names (issue 32), so no non-test file of analyze, its subpackages
// included, spells one in a string literal: a name written here would drift from
// engine's, which the fixtures check.
func TestNoEngineMetricNames(t *testing.T) {
	// The prefixes of engines' and KV connectors' series (engine.All, engine.LMCache).
	prefixes := []string{"vllm:", "sglang:", "lmcache:", "llamacpp:", "tgi_"}
	if got := engineNameLiterals(t, ".", prefixes); len(got) > 0 {
		t.Errorf("engine metric names outside package engine:\n%s", strings.Join(got, "\n"))
	}
}

// TestEngineNameLiteralsFinds: the scan above can fail: it finds a name in a
// literal of a file like analyze's, and skips test files and comments.
func TestEngineNameLiteralsFinds(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go":      "package a\n\n// vllm:num_requests_running in a comment is fine.\nvar m = map[string]int{`sglang:token_usage`: 1}\n",
		"b.go":      "package a\n\nfunc f() string { return \"x\" + \"lmcache:num_hit_tokens\" }\n",
		"a_test.go": "package a\n\nvar n = \"vllm:prompt_tokens\"\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := engineNameLiterals(t, dir, []string{"vllm:", "sglang:", "lmcache:"})
	if len(got) != 2 || !strings.Contains(strings.Join(got, " "), "sglang:token_usage") || !strings.Contains(strings.Join(got, " "), "lmcache:num_hit_tokens") {
		t.Errorf("found %q, want the two literals of a.go and b.go", got)
	}
}

// engineNameLiterals lists "file:line: literal" for each string literal in the
// non-test Go files under dir (testdata aside) that starts with one of prefixes.
func engineNameLiterals(t *testing.T, dir string, prefixes []string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, p := range prefixes {
				if strings.HasPrefix(s, p) {
					found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
					break
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", dir, err)
	}
	return found
}
