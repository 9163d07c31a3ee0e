package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestWriteSamples writes sample reports to $REPORT_SAMPLES for looking at by eye.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("REPORT_SAMPLES")
	if dir == "" {
		t.Skip("set REPORT_SAMPLES=dir to write sample reports")
	}
	for name, a := range map[string]*analyze.Analysis{"one": fixture(10, 500), "two": fixtureTwo(10, 500), "hostile": fixtureHostile(), "empty": fixtureEmpty(3), "none": fixtureEmpty(0)} {
		f, err := os.Create(filepath.Join(dir, name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(f, a, Options{Tool: "ceiling 0.1.0-dev"}); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
