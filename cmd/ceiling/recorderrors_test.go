package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record"
)

// TestRecordErrorsNameFields: package record's errors name record.Options fields,
// never flags the library does not have; every field they name is a real field
// and the CLI maps it to its flag.
func TestRecordErrorsNameFields(t *testing.T) {
	files, err := filepath.Glob("../../record/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	ot := reflect.TypeOf(record.Options{})
	for i := range ot.NumField() {
		fields[ot.Field(i).Name] = true
	}
	flags := recordFlagNames()
	named := regexp.MustCompile(`Options\.([A-Z][A-Za-z]*)`)
	lit := regexp.MustCompile(`(errors\.New|fmt\.Errorf)\("((?:[^"\\]|\\.)*)"`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range lit.FindAllStringSubmatch(string(data), -1) {
			for _, n := range named.FindAllStringSubmatch(m[2], -1) {
				seen++
				if !fields[n[1]] {
					t.Errorf("%s: error %q names Options.%s, which record.Options does not have", f, m[2], n[1])
				}
				if _, ok := flags["Options."+n[1]]; !ok {
					t.Errorf("%s: error %q names Options.%s, which the CLI does not map to a flag (recordFlagNames)", f, m[2], n[1])
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no record error names an Options field")
	}
	for name := range flags {
		if !fields[strings.TrimPrefix(name, "Options.")] {
			t.Errorf("recordFlagNames maps %s, which record.Options does not have", name)
		}
	}
}

// TestRecordErrorsSpeakFlags: the CLI's messages stay in the flags' words.
func TestRecordErrorsSpeakFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "1,2", "--rate", "1"}, "--concurrency and --rate exclude each other"},
		{[]string{"--concurrency", "4", "--requests-per-level", "2"}, "--requests-per-level 2 is below --concurrency 4"},
		{[]string{"--concurrency", "auto", "--rate", "1"}, "--concurrency auto and --rate exclude each other"},
		{[]string{"--concurrency", "1", "--endpoint", "nope"}, `--endpoint "nope": want chat or completions`},
		{[]string{"--concurrency", "1", "--output-tokens", "99999999"}, "--output-tokens 99999999: at most"},
	} {
		args := append([]string{"record", "--url", "http://127.0.0.1:1", "-o", filepath.Join(t.TempDir(), "x.parquet")}, c.args...)
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "Options.") {
			t.Errorf("ceiling %s: exit %d, stderr %q; want a usage error saying %q", strings.Join(args, " "), code, stderr, c.want)
		}
	}
}
