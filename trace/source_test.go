package trace

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// TestImageReadsLikeAFile: a trace image in memory (an imported run never written
// out) opens and scans exactly as the same trace written to disk does; a damaged
// image is refused by its name.
func TestImageReadsLikeAFile(t *testing.T) {
	info := RunInfo{Tool: "ceiling import", RunID: "img", Levels: []LevelInfo{{Level: 1, Concurrency: 2}, {Level: 0, Concurrency: 1}}}
	rows := []Row{{RunID: "img", Level: 0, EndNs: 5}, {RunID: "img", Level: 1, EndNs: 7}, {RunID: "img", Level: 1, EndNs: 9}}
	var buf bytes.Buffer
	if err := Write(&buf, info, rows); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "img.parquet")
	if err := WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
	fromDisk, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	inMemory, err := OpenImage("imported files", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sum := func(s *Source) (levels []int, ends int64) {
		for _, l := range s.Info.Levels {
			levels = append(levels, l.Level)
		}
		for _, f := range s.Files {
			err := f.Scan(context.Background(), []Column{{Name: ColEndNs, Type: arrow.INT64}}, func(rec arrow.Record, cols map[string]int) error {
				a, err := Col[*array.Int64](rec, cols, ColEndNs)
				if err != nil {
					return err
				}
				for i := range a.Len() {
					ends += a.Value(i)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return levels, ends
	}
	dl, de := sum(fromDisk)
	ml, me := sum(inMemory)
	if de != 21 || me != de || len(ml) != 2 || ml[0] != 0 || ml[1] != 1 || len(dl) != 2 {
		t.Errorf("disk: levels %v, end sum %d; memory: levels %v, end sum %d; want [0 1] and 21 for both", dl, de, ml, me)
	}
	if inMemory.Name != "imported files" || inMemory.Info.RunID != "img" {
		t.Errorf("image source %q of run %q", inMemory.Name, inMemory.Info.RunID)
	}
	if _, err := OpenImage("broken image", buf.Bytes()[:buf.Len()/2]); err == nil || !strings.Contains(err.Error(), "broken image") {
		t.Errorf("half an image: %v, want an error naming it", err)
	}
}
