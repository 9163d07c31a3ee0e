package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A CSV of published levels reads into summary-level points: per-GPU or whole
// throughputs, lengths, per-user speed and latencies in seconds; '#' lines are
// comments and other columns are kept out of the numbers.
func TestReadSummaryCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "levels.csv")
	body := "# a published table\nconcurrency,output_tok_s_per_gpu,per_user_tok_s,input_tokens,output_tokens,ttft_ms,tpot_ms,source\n" +
		"4,42.67,91.2,8192,1024,350,10.9,blog\n64,130.56,,8192,1024,,59.9,blog\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummaryCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if !s.SummaryLevel || s.Tool != FromPointsCSV || len(s.Points) != 2 {
		t.Fatalf("summary %+v", s)
	}
	p := s.Points[0]
	if p.Concurrency != 4 || *p.OutputTokSPerGPU != 42.67 || *p.PerUserTokS != 91.2 || *p.InputTokens != 8192 || *p.OutputTokens != 1024 ||
		*p.TTFT.P50 != 0.35 || *p.TPOT.P50 != 0.0109 || p.OutputTokS != nil {
		t.Errorf("first level %+v", p)
	}
	if s.Points[1].PerUserTokS != nil {
		t.Errorf("an empty cell became %v", *s.Points[1].PerUserTokS)
	}
}

// Bad tables are refused with the file, the row and the column named.
func TestReadSummaryCSVErrors(t *testing.T) {
	for _, tt := range []struct {
		name, body, want string
	}{
		{"no concurrency column", "level,output_tok_s\n1,10\n", "levels.csv: header: no column concurrency"},
		{"no throughput column", "concurrency,per_user_tok_s\n1,10\n", "no column output_tok_s_per_gpu or output_tok_s"},
		{"non-numeric cell", "concurrency,output_tok_s\n1,10\n2,fast\n", `levels.csv row 2, column output_tok_s: "fast" is not a number`},
		{"negative value", "concurrency,output_tok_s,ttft_ms\n1,10,-5\n", "levels.csv row 1, column ttft_ms: -5 is negative"},
		{"duplicate concurrency", "concurrency,output_tok_s\n1,10\n2,20\n2,21\n", "levels.csv row 3, column concurrency: 2 is row 2's level too"},
		{"zero concurrency", "concurrency,output_tok_s\n0,10\n", "levels.csv row 1, column concurrency: want a level of at least 1"},
		{"empty throughput", "concurrency,output_tok_s_per_gpu\n1,\n", "levels.csv row 1, column output_tok_s_per_gpu: empty"},
		{"zero throughput", "concurrency,output_tok_s\n1,0\n", "levels.csv row 1: a throughput of 0"},
		{"short row", "concurrency,output_tok_s\n1\n", "levels.csv row 1: 1 fields, the header has 2"},
		{"header only", "concurrency,output_tok_s\n", "want a header and one row per level"},
		{"not a number at all", "concurrency,output_tok_s\n1,NaN\n", `column output_tok_s: "NaN" is not a number`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "levels.csv")
			if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadSummaryCSV(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
