package analyze

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// Issue 31 item 9: a trace without a checksum (ceiling.digest) is said to be read
// unverified, in a warning naming the file, and a row whose output tokens are far
// above the max_tokens its request asked (2^31-1 under 20) is excluded as
// impossible; before, the file was read without a word and the row made 96
// billion tok/s of a valid level. The same rows with a checksum raise no
// unverified warning.
func TestUnverifiedTraceSaidAndOverlongRowsExcluded(t *testing.T) {
	info, rows := flipRows() // max_tokens 20, 20 output tokens a row
	huge := int32(1<<31 - 1)
	rows[5].OutputTokens = &huge
	dir := t.TempDir()
	raw, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare.parquet")
	writeParquet(t, bare, rows, map[string]string{trace.MetaSchemaVersion: "2", trace.MetaRun: string(raw)})
	a, err := Analyze(context.Background(), []string{bare}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	w := strings.Join(r.Warnings, "\n")
	if !strings.Contains(w, bare+" carries no checksum (ceiling.digest): its values are read unverified") {
		t.Errorf("no warning names %s as unverified: %q", bare, r.Warnings)
	}
	if !strings.Contains(w, "level 0: 1 rows excluded for impossible values (the first: output tokens 2147483647 far above the max_tokens 20 asked)") {
		t.Errorf("the overlong row is not excluded: %q", r.Warnings)
	}
	for _, l := range r.Levels {
		if l.OutputTokS > 1e5 {
			t.Errorf("level %d: %g output tok/s", l.Level, l.OutputTokS)
		}
	}

	signed := filepath.Join(dir, "signed.parquet")
	if err := trace.WriteFile(signed, info, rows); err != nil {
		t.Fatal(err)
	}
	if a, err = Analyze(context.Background(), []string{signed}, Options{}); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(a.Runs[0].Warnings, "\n"); strings.Contains(w, "unverified") {
		t.Errorf("a trace with its checksum is said to be unverified: %q", a.Runs[0].Warnings)
	}
}
