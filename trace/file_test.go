package trace

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestReadInfo: the run info, config included, comes back without the rows, from
// every schema version this package knows; other files are refused by name.
func TestReadInfo(t *testing.T) {
	dir := t.TempDir()
	info := RunInfo{Tool: "ceiling", RunID: "r1", Plan: Plan{Mode: "closed", Concurrency: []int{1, 2}, Seed: 7},
		Config: map[string]string{"concurrency": "1,2", "seed": "7"}}
	cur := filepath.Join(dir, "cur.parquet")
	if err := WriteFile(cur, info, []Row{{RunID: "r1"}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadInfo(cur)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != "r1" || !maps.Equal(got.Config, info.Config) || got.Plan.Seed != 7 {
		t.Errorf("ReadInfo = %+v, want %+v", got, info)
	}
	version := func(v string) string {
		p := filepath.Join(dir, "v"+v+".parquet")
		if err := writeParquet(p, info, []Row{}, "", parquet.KeyValueMetadata(MetaSchemaVersion, v)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := ReadInfo(version("1")); err != nil {
		t.Errorf("schema version 1: %v", err)
	}
	for _, tt := range []struct{ path, want string }{
		{version("3"), "newer than this ceiling reads"},
		{version("x"), `invalid ceiling.schema_version "x"`},
		{filepath.Join(dir, "missing.parquet"), "missing.parquet"},
	} {
		if _, err := ReadInfo(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadInfo(%s) = %v, want an error containing %q", filepath.Base(tt.path), err, tt.want)
		}
	}
}
