package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// Issue 31 item 5: `analyze --ignore-corrupt RUN.parts` and `report
// --ignore-corrupt RUN.parts` salvage the intact parts through the command, not
// only through analyze.Analyze. The parts directory is a real recording against
// the test engine whose final merge failed (a directory took the trace's place
// during the run), so every level is sealed as a part; one part is then damaged,
// in a data page (found while reading rows) or in its footer (found at open).
func TestIgnoreCorruptSalvagesThroughTheCommand(t *testing.T) {
	for _, where := range []string{"data", "footer"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "run.parquet")
			parts := out + ".parts"
			var once sync.Once
			eng := enginetest.New(enginetest.Config{Model: "m", Fault: func(i int64) enginetest.Fault {
				if i >= 1 { // a measured request: the output guard has passed
					once.Do(func() { os.Mkdir(out, 0o755) })
				}
				return enginetest.FaultNone
			}})
			defer eng.Close()
			if code, _, stderr := runCLI("record", "--url", eng.URL(), "--concurrency", "1,2,4", "--requests-per-level", "8",
				"--prompt-tokens", "20", "--output-tokens", "10", "--metrics-url", "off", "-o", out); code == exitOK {
				t.Fatalf("the merge into a directory succeeded; the test proves nothing\n%s", stderr)
			}
			damaged := filepath.Join(parts, onePart(t, parts, "-rows-L0001.parquet"))
			b, err := os.ReadFile(damaged)
			if err != nil {
				t.Fatal(err)
			}
			at := 200
			if where == "footer" {
				at = len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:len(b)-4])) + 3
			}
			b[at] ^= 0x04
			if err := os.WriteFile(damaged, b, 0o644); err != nil {
				t.Fatal(err)
			}

			if code, _, stderr := runCLI("analyze", parts); code == exitOK || !strings.Contains(stderr, damaged) {
				t.Errorf("analyze without --ignore-corrupt: exit %d, stderr %q; want a refusal naming %s", code, stderr, damaged)
			}
			code, stdout, stderr := runCLI("analyze", parts, "--ignore-corrupt", "--format", "json")
			if code != exitOK {
				t.Fatalf("analyze --ignore-corrupt: exit %d\n%s", code, stderr)
			}
			var a analyze.Analysis
			if err := json.Unmarshal([]byte(stdout), &a); err != nil {
				t.Fatal(err)
			}
			checkSalvaged(t, "analyze", a, damaged)

			html := filepath.Join(dir, "report.html")
			if code, _, stderr := runCLI("report", parts, "--ignore-corrupt", "-o", html); code != exitOK {
				t.Fatalf("report --ignore-corrupt: exit %d\n%s", code, stderr)
			}
			page, err := os.ReadFile(html)
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`<script type="application/json" id="ceiling-analysis">([\s\S]*?)</script>`).FindSubmatch(page)
			if m == nil {
				t.Fatal("the report embeds no analysis")
			}
			var ra analyze.Analysis
			if err := json.Unmarshal(m[1], &ra); err != nil {
				t.Fatal(err)
			}
			checkSalvaged(t, "report", ra, damaged)
		})
	}
}

// onePart is the name of the one part in dir whose name ends in suffix.
func onePart(t *testing.T, dir, suffix string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			names = append(names, e.Name())
		}
	}
	if len(names) != 1 {
		t.Fatalf("parts ending %s in %s: %v, want one", suffix, dir, names)
	}
	return names[0]
}

// checkSalvaged checks that a holds the intact levels (concurrency 1 and 4, 8
// requests each) and a warning naming the damaged part.
func checkSalvaged(t *testing.T, cmd string, a analyze.Analysis, damaged string) {
	t.Helper()
	if len(a.Runs) != 1 {
		t.Fatalf("%s: %d runs, want 1", cmd, len(a.Runs))
	}
	var conc []int
	for _, l := range a.Runs[0].Levels {
		conc = append(conc, l.Concurrency)
		if l.Requests != 8 {
			t.Errorf("%s: c=%d has %d requests, want 8", cmd, l.Concurrency, l.Requests)
		}
	}
	if len(conc) != 2 || conc[0] != 1 || conc[1] != 4 {
		t.Errorf("%s: levels at concurrency %v, want the intact 1 and 4", cmd, conc)
	}
	if !strings.Contains(strings.Join(a.Runs[0].Warnings, "\n"), damaged) {
		t.Errorf("%s: no warning names the part left out (%s): %q", cmd, damaged, a.Runs[0].Warnings)
	}
}
