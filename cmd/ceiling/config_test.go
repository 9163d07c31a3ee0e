package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// recorded is what a run stored that its options decide: the plan, target,
// declared deployment, config, and each request's asked lengths in id order.
type recorded struct {
	Plan     trace.Plan
	Target   trace.Target
	Declared trace.Declared
	Config   map[string]string
	Lengths  [][2]int32 // target_prompt_tokens, max_tokens
}

func readRecorded(t *testing.T, path string) recorded {
	t.Helper()
	info, rows, err := trace.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b trace.Row) int { return int(a.RequestID - b.RequestID) })
	r := recorded{Plan: info.Plan, Target: info.Target, Declared: info.Declared, Config: info.Config}
	for _, row := range rows {
		r.Lengths = append(r.Lengths, [2]int32{row.TargetPromptTokens, row.MaxTokens})
	}
	return r
}

func writeConfig(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustRecord(t *testing.T, args ...string) string {
	t.Helper()
	code, _, stderr := runRecordArgs(nil, args...)
	if code != exitOK {
		t.Fatalf("ceiling record %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	return stderr
}

// TestRecordConfigSameAsFlags: a YAML and a JSON config record the same run as the
// equivalent flags (plan, declared deployment, stored config and every request's
// lengths), and a flag given with the file overrides it.
func TestRecordConfigSameAsFlags(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	tests := []struct {
		name  string
		flags []string // with --url and -o added
		yaml  string
		json  string
		extra []string // given on the command line with the config
	}{{
		name: "closed loop, distribution, declared",
		flags: []string{"--concurrency", "1,2", "--requests-per-level", "4", "--prompt-tokens", "uniform:20-40",
			"--output-tokens", "4", "--seed", "9", "--notes", "a: b", "--gpu", "h100-sxm", "--ignore-eos",
			"--timeout", "30s", "--metrics-url", "off"},
		yaml: "concurrency: [1, 2]\nrequests-per-level: 4\nprompt-tokens: uniform:20-40\noutput-tokens: 4\n" +
			"seed: 9\nnotes: \"a: b\"\ngpu: h100-sxm\nignore-eos: true\ntimeout: 30s\nmetrics-url: \"off\"\n",
		json: `{"concurrency": "1,2", "requests-per-level": 4, "prompt-tokens": "uniform:20-40", "output-tokens": 4,
			"seed": 9, "notes": "a: b", "gpu": "h100-sxm", "ignore-eos": true, "timeout": "30s", "metrics-url": "off"}`,
	}, {
		name: "open loop, gamma, prefixes",
		flags: []string{"--rate", "50,100", "--burstiness", "0.5", "--requests-per-level", "4", "--output-tokens", "normal:8,2",
			"--prompt-tokens", "30", "--prefixes", "2", "--shared-prefix-tokens", "8", "--prefix-mix", "0.7,0.3", "--metrics-url", "off", "--seed", "3"},
		yaml: "rate: [50, 100]\nburstiness: 0.5\nrequests-per-level: 4\noutput-tokens: normal:8,2\nprompt-tokens: 30\n" +
			"prefixes: 2\nshared-prefix-tokens: 8\nprefix-mix: [0.7, 0.3]\nmetrics-url: \"off\"\nseed: 3\n",
		json: `{"rate": [50, 100], "burstiness": 0.5, "requests-per-level": 4, "output-tokens": "normal:8,2", "prompt-tokens": 30,
			"prefixes": 2, "shared-prefix-tokens": 8, "prefix-mix": [0.7, 0.3], "metrics-url": "off", "seed": 3}`,
	}, {
		name:  "a flag overrides the file",
		flags: []string{"--concurrency", "1", "--requests-per-level", "3", "--prompt-tokens", "25", "--output-tokens", "4", "--metrics-url", "off", "--seed", "5"},
		yaml:  "concurrency: [1, 2, 4]\nrequests-per-level: 3\nprompt-tokens: 25\noutput-tokens: 4\nmetrics-url: \"off\"\nseed: 5\n",
		json:  `{"concurrency": [1, 2, 4], "requests-per-level": 3, "prompt-tokens": 25, "output-tokens": 4, "metrics-url": "off", "seed": 5}`,
		extra: []string{"--concurrency", "1"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := func(n string) string { return filepath.Join(dir, n+".parquet") }
			mustRecord(t, append([]string{"--url", eng.URL(), "-o", out("flags")}, tt.flags...)...)
			want := readRecorded(t, out("flags"))
			if want.Config["seed"] == "" || want.Config["url"] != eng.URL() || want.Config["output"] != "" {
				t.Errorf("flags run stored config %v: want the url and seed, not the output", want.Config)
			}
			for _, c := range []struct{ ext, text string }{{"yaml", tt.yaml}, {"json", tt.json}} {
				cfg := writeConfig(t, "sweep."+c.ext, c.text)
				mustRecord(t, append([]string{"--config", cfg, "--url", eng.URL(), "-o", out(c.ext)}, tt.extra...)...)
				if got := readRecorded(t, out(c.ext)); !reflect.DeepEqual(got, want) {
					t.Errorf("%s config recorded\n%+v\nflags recorded\n%+v", c.ext, got, want)
				}
			}
		})
	}
}

// TestRecordConfigErrors: a bad config exits 2 naming the file, line and key, and
// never shows a secret it refuses.
func TestRecordConfigErrors(t *testing.T) {
	tests := []struct {
		name, file, text string
		args             []string
		want             string
	}{
		{"unknown key", "sweep.yaml", "concurrency: [1]\nprompt_tokens: 100\n", nil, `sweep.yaml:2: unknown key "prompt_tokens" (did you mean prompt-tokens?)`},
		{"typo", "sweep.yaml", "concurency: [1]\n", nil, `sweep.yaml:1: unknown key "concurency" (did you mean concurrency?)`},
		{"far from any flag", "sweep.yaml", "concurrency: [1]\nflavour: 3\n", nil, `sweep.yaml:2: unknown key "flavour"` + "\n"},
		{"shorthand", "sweep.yaml", "concurrency: [1]\no: run.parquet\n", nil, `sweep.yaml:2: unknown key "o" (the keys are the long flag names: did you mean output?)`},
		{"unknown json key", "sweep.json", "{\"concurrency\": [1],\n \"rates\": [1]}", nil, `sweep.json:2: unknown key "rates" (did you mean rate?)`},
		{"bad duration", "sweep.yaml", "concurrency: [1]\nduration-per-level: 60\n", nil, `sweep.yaml:2: duration-per-level: invalid argument "60"`},
		{"bad int", "sweep.json", `{"concurrency": [1], "warmup": 1.5}`, nil, `sweep.json:1: warmup: invalid argument "1.5"`},
		{"bad level", "sweep.yaml", "url: http://127.0.0.1:1\nconcurrency: [1, x]\n", nil, `"x" is not a positive integer (want a list like 1,2,4,8 or auto) (concurrency is set in `},
		{"bad length", "sweep.yaml", "concurrency: [1]\nprompt-tokens: normal:2000\n", nil, `(prompt-tokens is set in `},
		{"zero", "sweep.yaml", "concurrency: [1]\nrequests-per-level: 0\n", nil, `--requests-per-level 0: must be positive (requests-per-level is set in `},
		{"nested", "sweep.yaml", "concurrency:\n  a: 1\n", nil, "sweep.yaml: line 1: concurrency: want a value or a list of values"},
		{"null", "sweep.yaml", "concurrency:\n", nil, "sweep.yaml: line 1: concurrency: no value"},
		{"list of lists", "sweep.json", `{"concurrency": [[1]]}`, nil, "concurrency: a list may hold only values"},
		{"twice", "sweep.yaml", "concurrency: [1]\nconcurrency: [2]\n", nil, "sweep.yaml:2: concurrency is given twice"},
		{"not a mapping", "sweep.yaml", "- 1\n- 2\n", nil, "want a mapping of flag names to values"},
		{"not an object", "sweep.json", `[1, 2]`, nil, "want an object of flag names to values"},
		{"bad yaml", "sweep.yaml", "concurrency: [1\n", nil, "sweep.yaml: yaml: line 1"},
		{"bad json", "sweep.json", `{"concurrency": }`, nil, "sweep.json: line 1: concurrency: invalid character"},
		{"empty", "sweep.yaml", "# nothing\n", nil, "sweep.yaml: no keys"},
		{"empty json", "sweep.json", "", nil, "sweep.json: no keys"},
		{"truncated json", "sweep.json", `{"concurrency": [1],`, nil, "sweep.json: the file ends inside the object"},
		{"text after json", "sweep.json", `{"concurrency": [1]} {}`, nil, "sweep.json: text after the object"},
		{"config in config", "sweep.yaml", "config: other.yaml\n", nil, "sweep.yaml:1: config cannot be set in a config"},
		{"both", "sweep.yaml", "concurrency: [1]\n", []string{"--config-from", "old.parquet"}, "--config and --config-from exclude each other"},
		{"api key", "sweep.yaml", "concurrency: [1]\napi_key: sk-cfg-secret\n", nil, "sweep.yaml:2: api_key: the API key is never read from a file"},
		{"key in api-key-env", "sweep.json", `{"concurrency": [1], "api-key-env": "sk-cfg-secret"}`, nil, "api-key-env: the value looks like an API key"},
		{"bearer in notes", "sweep.yaml", "concurrency: [1]\nnotes: Bearer abc.def\n", nil, "notes: the value looks like an API key"},
		{"password in url", "sweep.yaml", "url: http://u:pw-cfg-secret@127.0.0.1:1\nconcurrency: [1]\n", nil, "url holds a password: give credentials with --url on the command line"},
		// Issue 31 item 1: every URL flag follows the rule, each value of a list too.
		{"password in gpu-metrics-url", "sweep.yaml", "concurrency: [1]\ngpu-metrics-url: [http://a:9400/metrics, http://u:pw-cfg-secret@b:9400/metrics]\n", nil, "gpu-metrics-url holds a password: give credentials with --gpu-metrics-url on the command line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeConfig(t, tt.file, tt.text)
			args := append([]string{"--config", cfg, "--url", "http://127.0.0.1:1", "-o", filepath.Join(t.TempDir(), "x.parquet")}, tt.args...)
			if strings.HasPrefix(tt.text, "url:") {
				args = append([]string{"--config", cfg, "-o", filepath.Join(t.TempDir(), "x.parquet")}, tt.args...)
			}
			code, _, stderr := runRecordArgs(nil, args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tt.want)
			}
			if strings.Contains(stderr, "cfg-secret") || strings.Contains(stderr, "abc.def") {
				t.Errorf("stderr shows the secret:\n%s", stderr)
			}
		})
	}
	code, _, stderr := runRecordArgs(nil, "--config", filepath.Join(t.TempDir(), "missing.yaml"), "-o", "x.parquet")
	if code != exitUsage || !strings.Contains(stderr, "--config: ") || !strings.Contains(stderr, "missing.yaml") || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

// TestRecordConfigFrom: a trace re-runs its sweep (same plan, seed, lengths and
// model, a new URL allowed); a flag changing the plan is said before the sweep; a
// trace without a config, or an imported one, is refused saying what is missing.
func TestRecordConfigFrom(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.parquet")
	cfg := writeConfig(t, "sweep.yaml", "concurrency: [1, 2]\nrequests-per-level: 6\nwarmup: 1\n"+
		"prompt-tokens: lognormal:30,0.5\noutput-tokens: uniform:2-9\nseed: 42\nmetrics-url: \"off\"\nnotes: first\n")
	mustRecord(t, "--config", cfg, "--url", eng.URL(), "-o", old)
	want := readRecorded(t, old)

	again := filepath.Join(dir, "again.parquet")
	if stderr := mustRecord(t, "--config-from", old, "-o", again); strings.Contains(stderr, "plan differs") {
		t.Errorf("re-run says the plan differs:\n%s", stderr)
	}
	got := readRecorded(t, again)
	// The re-run's config also pins the model the first run measured.
	if got.Config["model"] != "m" {
		t.Errorf("re-run config %v: want model m pinned", got.Config)
	}
	delete(got.Config, "model")
	if !reflect.DeepEqual(got, want) {
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		t.Errorf("re-run recorded\n%s\nfirst run\n%s", b, a)
	}

	// Another server: the URL given overrides the stored one, the plan stays.
	eng2 := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng2.Close()
	moved := filepath.Join(dir, "moved.parquet")
	mustRecord(t, "--config-from", old, "--url", eng2.URL(), "-o", moved)
	if m := readRecorded(t, moved); !reflect.DeepEqual(m.Plan, want.Plan) || m.Target.BaseURL != eng2.URL() {
		t.Errorf("moved run: plan %+v at %s, want %+v at %s", m.Plan, m.Target.BaseURL, want.Plan, eng2.URL())
	}

	changed := filepath.Join(dir, "changed.parquet")
	stderr := mustRecord(t, "--config-from", old, "--concurrency", "1", "-o", changed)
	if !strings.Contains(stderr, "note: the plan differs from "+old) {
		t.Errorf("overriding --concurrency: stderr\n%s\nwant a note that the plan differs", stderr)
	}
	if c := readRecorded(t, changed); !slices.Equal(c.Plan.Concurrency, []int{1}) || c.Plan.Seed != 42 {
		t.Errorf("changed run plan %+v, want concurrency [1] and seed 42", c.Plan)
	}

	bare := filepath.Join(dir, "bare.parquet")
	if err := trace.WriteFile(bare, trace.RunInfo{Tool: "ceiling", Version: "0.0.9", Plan: want.Plan}, nil); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported.parquet")
	if err := trace.WriteFile(imported, trace.RunInfo{Tool: "ceiling", Source: &trace.SourceInfo{Tool: "vllm"}}, nil); err != nil {
		t.Fatal(err)
	}
	bad := writeConfig(t, "bad.parquet", "not parquet")
	withKey := filepath.Join(dir, "withkey.parquet")
	if err := trace.WriteFile(withKey, trace.RunInfo{Tool: "ceiling", Config: map[string]string{"concurrency": "1", "api-key": "sk-trace-secret"}}, nil); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.parquet")
	if err := trace.WriteFile(unknown, trace.RunInfo{Tool: "ceiling", Config: map[string]string{"concurrency": "1", "workers": "3"}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{bare, `the trace holds no run config (the "config" key of its ceiling.run metadata): it was recorded by ceiling 0.0.9, before configs were stored`},
		{imported, "imported from vllm results, not recorded by ceiling record"},
		{bad, "--config-from: reading " + bad},
		{withKey, "withkey.parquet (its stored config): api-key: the API key is never read from a file"},
		{unknown, `unknown.parquet (its stored config): unknown key "workers"`},
	} {
		code, _, stderr := runRecordArgs(nil, "--config-from", tt.path, "-o", filepath.Join(dir, "x.parquet"))
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "sk-trace-secret") {
			t.Errorf("--config-from %s: exit %d, stderr:\n%s\nwant exit 2 and %q", filepath.Base(tt.path), code, stderr, tt.want)
		}
	}
}

// TestGivenConfig: the stored config leaves out the invocation's own flags and URL
// credentials, and always has the seed: the fresh one drawn when none was given.
func TestGivenConfig(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", APIKey: "sk-given-secret"})
	defer eng.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "run.parquet")
	u := strings.Replace(eng.URL(), "http://", "http://user:pw-given@", 1)
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-given-secret"
		}
		return ""
	}
	code, _, stderr := runRecordArgs(getenv, "--url", u, "--concurrency", "1", "--requests-per-level", "2", "--prompt-tokens", "20",
		"--output-tokens", "3", "--metrics-url", "off", "-o", out, "--force")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, err := trace.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"url": eng.URL(), "concurrency": "1", "requests-per-level": "2", "prompt-tokens": "20",
		"output-tokens": "3", "metrics-url": "off", "seed": strconv.FormatUint(info.Plan.Seed, 10)}
	if info.Plan.Seed == 0 {
		t.Error("no seed recorded in the plan")
	}
	if !maps.Equal(info.Config, want) {
		t.Errorf("stored config %v, want %v", info.Config, want)
	}
	raw, _ := os.ReadFile(out)
	if strings.Contains(string(raw), "pw-given") || strings.Contains(string(raw), "sk-given-secret") {
		t.Error("the trace holds a credential")
	}
}

func TestRecordHelpDocumentsConfig(t *testing.T) {
	code, stdout, _ := runRecordArgs(nil, "--help")
	for _, want := range []string{"--config FILE", "--config-from TRACE", "ceiling record --config sweep.yaml", "ceiling record --config-from run.parquet -o rerun.parquet"} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("--help (exit %d) lacks %q", code, want)
		}
	}
}
