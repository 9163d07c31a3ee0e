package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/internal/urlcred"
	"github.com/ceiling-llm/ceiling/record"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// A run config is `ceiling record`'s flags written down: its keys are the flag names,
// its values the flags' syntax, and it goes through the same FlagSet as the command
// line (fs.Set for each key the command line did not give), so a value from a file
// is checked exactly as the flag is.

const configExample = `
  # the flags in a file (keys are the flag names; flags given here override it)
  ceiling record --config sweep.yaml --url http://127.0.0.1:8000 -o run.parquet
  # re-run a recorded sweep: same plan, seed and workload (another URL or -o may be given)
  ceiling record --config-from run.parquet -o rerun.parquet
`

// configFlags are --config and --config-from.
type configFlags struct {
	file, from string
}

func addConfigFlags(fs *pflag.FlagSet) *configFlags {
	var c configFlags
	fs.StringVar(&c.file, "config", "", "read flags from a YAML or JSON `FILE` whose keys are the flag names, e.g. concurrency: [1,2,4] or prompt-tokens: uniform:500-4000 (flags on the command line override it; never the API key)")
	fs.StringVar(&c.from, "config-from", "", "re-run the sweep stored in the `TRACE` recorded by ceiling record: its flags, plan, seed and workload (--url and -o may be given to override)")
	return &c
}

// configKeysNotStored are flags of one invocation, not of the sweep: a trace's
// config does not carry them. A file may set output, resume and force, but not the
// config flags themselves (configKeysRefused). Which secret is sent
// (api-key-env) is chosen on the command line only: a file names it never, and a
// trace's (stored by an older ceiling) is ignored, so a shared file cannot send
// $HF_TOKEN or $AWS_SECRET_ACCESS_KEY to the host it names.
var (
	configKeysNotStored = []string{"output", "resume", "force", "config", "config-from", "help", "api-key-env"}
	configKeysRefused   = []string{"config", "config-from", "help"}
	configKeySecretEnv  = "api-key-env"
)

// configValue is one key of a config and where it was written.
type configValue struct {
	key, value string
	line       int // 0 when unknown (a trace)
}

// runConfig is the config a recording was given: where from, and the keys it set
// (those the command line did not override).
type runConfig struct {
	source string         // the file, or the trace and "(its stored config)"
	set    []configValue  // the keys set from the config
	from   *trace.RunInfo // the trace of --config-from
}

// apply reads --config or --config-from, if given, and sets every flag the command
// line did not set from it. A nil runConfig (no config) is valid.
func (c *configFlags) apply(fs *pflag.FlagSet) (*runConfig, error) {
	var (
		rc     runConfig
		values []configValue
		err    error
	)
	switch {
	case c.file != "" && c.from != "":
		return nil, errors.New("--config and --config-from exclude each other")
	case c.file != "":
		rc.source = c.file
		if values, err = readConfigFile(c.file); err != nil {
			return nil, err
		}
	case c.from != "":
		rc.source = c.from + " (its stored config)"
		info, err := trace.ReadInfo(c.from)
		if err != nil {
			return nil, fmt.Errorf("--config-from: %w", err)
		}
		if values, err = traceConfig(c.from, info); err != nil {
			return nil, err
		}
		rc.from = &info
	default:
		return nil, nil
	}
	seen := map[string]bool{}
	for _, v := range values {
		where := rc.where(v)
		if seen[v.key] {
			return nil, fmt.Errorf("%s: %s is given twice", where, v.key)
		}
		seen[v.key] = true
		if v.key == configKeySecretEnv && c.from != "" {
			continue // an older trace's: never used (configKeysNotStored)
		}
		if err := checkConfigKey(fs, v, c.from != ""); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if fs.Changed(v.key) {
			continue // the command line overrides the config
		}
		if err := setConfigValue(fs, v); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, v.key, err)
		}
		rc.set = append(rc.set, v)
	}
	return &rc, nil
}

// setConfigValue sets a flag from a config value. A repeatable flag
// (--gpu-metrics-url) gets each of the list's values: a config file's list
// arrives as "a,b", a trace's stored value in the flag's own form "[a,b]"; set as
// one value, either was one malformed URL.
func setConfigValue(fs *pflag.FlagSet, v configValue) error {
	if _, ok := fs.Lookup(v.key).Value.(pflag.SliceValue); !ok {
		return fs.Set(v.key, v.value)
	}
	list := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v.value), "["), "]")
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if err := fs.Set(v.key, item); err != nil {
			return err
		}
	}
	return nil
}

// sets says whether the config set key (the command line did not override it).
func (rc *runConfig) sets(key string) bool {
	if rc == nil {
		return false
	}
	for _, v := range rc.set {
		if v.key == key {
			return true
		}
	}
	return false
}

func (rc *runConfig) where(v configValue) string {
	if v.line > 0 {
		return fmt.Sprintf("%s:%d", rc.source, v.line)
	}
	return rc.source
}

// checkConfigKey refuses a key that is no flag of the sweep, or that holds a secret.
func checkConfigKey(fs *pflag.FlagSet, v configValue, fromTrace bool) error {
	norm := strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(v.key))
	switch norm {
	case "api-key", "apikey", "key", "token", "secret", "password", "authorization", "bearer", "openai-api-key":
		return fmt.Errorf("%s: the API key is never read from a file: export it and name the variable with api-key-env (default OPENAI_API_KEY)", v.key)
	}
	if looksSecret(v.value) {
		// The value itself is not repeated: it may be a key.
		return fmt.Errorf("%s: the value looks like an API key or token, which a config file never holds: export it and name the variable with api-key-env (default OPENAI_API_KEY)", v.key)
	}
	if isURLFlag(v.key) && slices.ContainsFunc(strings.Split(v.value, ","), hasPassword) {
		return fmt.Errorf("%s holds a password: give credentials with --%s on the command line, not in a file", v.key, v.key)
	}
	if v.key == configKeySecretEnv {
		return fmt.Errorf("%s cannot be set in a config: which environment variable is sent as the API key is chosen on the command line only (--%s)", v.key, v.key)
	}
	if slices.Contains(configKeysRefused, v.key) || fromTrace && slices.Contains(configKeysNotStored, v.key) {
		return fmt.Errorf("%s cannot be set in a config", v.key)
	}
	if fs.Lookup(v.key) == nil {
		return fmt.Errorf("unknown key %q%s", v.key, suggestFlag(fs, v.key))
	}
	return nil
}

// looksSecret says whether a value has the shape of an API key or a bearer token.
func looksSecret(v string) bool {
	v = strings.TrimSpace(v)
	for _, p := range []string{"sk-", "Bearer ", "bearer ", "hf_", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "AKIA"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

func hasPassword(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return strings.Contains(raw, "@") // unparsable: refuse what may hold user:pass@
	}
	_, ok := u.User.Password()
	return ok
}

// suggestFlag names the flag closest to key, when one is close.
func suggestFlag(fs *pflag.FlagSet, key string) string {
	if len(key) == 1 && fs.ShorthandLookup(key) != nil {
		return fmt.Sprintf(" (the keys are the long flag names: did you mean %s?)", fs.ShorthandLookup(key).Name)
	}
	norm := strings.ToLower(strings.ReplaceAll(key, "_", "-"))
	best, bestD := "", 1<<30
	fs.VisitAll(func(f *pflag.Flag) {
		if slices.Contains(configKeysRefused, f.Name) {
			return
		}
		if d := editDistance(norm, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best != "" && bestD <= max(2, len(best)/4) {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// maxRunConfigBytes bounds a --config file: a run config is a few hundred bytes of
// flags (a long --concurrency list or notes included); a bigger one is not a config,
// and would be held in memory and stored in the trace.
const maxRunConfigBytes = 1 << 20

// readConfigFile reads a config: JSON when the name ends in .json, else YAML. It
// must be a regular file (a FIFO would block) of at most maxRunConfigBytes.
func readConfigFile(path string) ([]configValue, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("--config %s: not a regular file (mode %s)", path, st.Mode())
	}
	tooBig := fmt.Errorf("--config %s: larger than %d KiB, which no run config is (its keys are the flags of ceiling record)", path, maxRunConfigBytes>>10)
	if st.Size() > maxRunConfigBytes {
		return nil, tooBig
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRunConfigBytes+1)) // it may have grown since Stat
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if len(data) > maxRunConfigBytes {
		return nil, tooBig
	}
	var values []configValue
	if strings.EqualFold(filepath.Ext(path), ".json") {
		values, err = parseJSONConfig(data)
	} else {
		values, err = parseYAMLConfig(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("%s: no keys (want flag names, e.g. concurrency: [1, 2, 4])", path)
	}
	return values, nil
}

func parseYAMLConfig(data []byte) ([]configValue, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of flag names to values", m.Line)
	}
	var out []configValue
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		s, err := yamlValue(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", k.Line, k.Value, err)
		}
		out = append(out, configValue{key: k.Value, value: s, line: k.Line})
	}
	return out, nil
}

// yamlValue is a scalar's text as written, or a list's items joined by commas (the
// flags' list syntax).
func yamlValue(n *yaml.Node) (string, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "", errors.New("no value")
		}
		return n.Value, nil
	case yaml.SequenceNode:
		items := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
				return "", errors.New("a list may hold only values")
			}
			items = append(items, c.Value)
		}
		return strings.Join(items, ","), nil
	}
	return "", errors.New("want a value or a list of values")
}

func parseJSONConfig(data []byte) ([]configValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	line := func() int { return 1 + bytes.Count(data[:dec.InputOffset()], []byte("\n")) }
	if tok, err := dec.Token(); err == io.EOF {
		return nil, nil // empty: "no keys"
	} else if err != nil {
		return nil, err
	} else if tok != json.Delim('{') {
		return nil, errors.New("want an object of flag names to values")
	}
	out, err := jsonObject(dec, line)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("the file ends inside the object")
	}
	return out, err
}

// jsonObject reads the keys and values of the object dec has just opened.
func jsonObject(dec *json.Decoder, line func() int) ([]configValue, error) {
	var out []configValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line(), err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("line %d: want a key, found %v", line(), tok)
		}
		at := line()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", at, key, err)
		}
		s, err := jsonValue(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", at, key, err)
		}
		out = append(out, configValue{key: key, value: s, line: at})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the object")
	}
	return out, nil
}

func jsonValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return fmt.Sprint(v), nil
	case []any:
		items := make([]string, 0, len(v))
		for _, x := range v {
			if _, ok := x.([]any); ok {
				return "", errors.New("a list may hold only values")
			}
			s, err := jsonValue(x)
			if err != nil {
				return "", errors.New("a list may hold only values")
			}
			items = append(items, s)
		}
		return strings.Join(items, ","), nil
	case nil:
		return "", errors.New("no value")
	}
	return "", errors.New("want a value or a list of values")
}

// traceConfig is the config stored in a trace, in key order, with the recorded
// model pinned when the config let the server choose it.
func traceConfig(path string, info trace.RunInfo) ([]configValue, error) {
	if info.Source != nil {
		return nil, fmt.Errorf("--config-from %s: the run was imported from %s results, not recorded by ceiling record: it has no config to re-run", path, info.Source.Tool)
	}
	if info.Config == nil {
		return nil, fmt.Errorf("--config-from %s: the trace holds no run config (the %q key of its %s metadata): it was recorded by ceiling %s, before configs were stored; give the flags again (its plan is in that metadata)",
			path, "config", trace.MetaRun, info.Version)
	}
	keys := make([]string, 0, len(info.Config))
	for k := range info.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]configValue, 0, len(keys)+1)
	for _, k := range keys {
		out = append(out, configValue{key: k, value: info.Config[k]})
	}
	if _, ok := info.Config["model"]; !ok && info.Target.Model != "" {
		out = append(out, configValue{key: "model", value: info.Target.Model})
	}
	return out, nil
}

// given is the configuration as given, from the config and the command line, for
// the trace: every flag set, but never the invocation's own (output, resume, ...)
// nor credentials in a URL; the seed always, as it fixes the workload.
func givenConfig(fs *pflag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.Visit(func(f *pflag.Flag) {
		if slices.Contains(configKeysNotStored, f.Name) {
			return
		}
		out[f.Name] = storedValue(f)
	})
	if f := fs.Lookup("seed"); f != nil {
		out["seed"] = f.Value.String()
	}
	return out
}

// isURLFlag says whether a flag takes URLs. Every such flag is named url or ends in
// -url (url, metrics-url, gpu-metrics-url), so that one rule covers them all: their
// values are stored only through urlcred.Strip, and a config may not give them a
// password.
func isURLFlag(name string) bool { return name == "url" || strings.HasSuffix(name, "-url") }

// storedValue is a flag's value as a trace's config keeps it: each value of a URL
// flag without its credentials (user:password@, query, fragment), in the flag's
// own form (a repeated flag's list as [a,b]).
func storedValue(f *pflag.Flag) string {
	if !isURLFlag(f.Name) {
		return f.Value.String()
	}
	sv, ok := f.Value.(pflag.SliceValue)
	if !ok {
		return urlcred.Strip(f.Value.String())
	}
	vals := sv.GetSlice()
	stripped := make([]string, len(vals))
	for i, v := range vals {
		stripped[i] = urlcred.Strip(v)
	}
	return "[" + strings.Join(stripped, ",") + "]"
}

// blame adds to a usage message naming --KEY where KEY came from the config, so a
// bad value in a file is found there.
func (rc *runConfig) blame(msg string) string {
	if rc == nil {
		return msg
	}
	var from []string
	for _, v := range rc.set {
		if mentionsFlag(msg, v.key) {
			from = append(from, v.key+" is set in "+rc.where(v))
		}
	}
	if len(from) == 0 {
		return msg
	}
	return fmt.Sprintf("%s (%s)", msg, strings.Join(from, "; "))
}

// mentionsFlag says whether msg names --name (not a longer flag it begins).
func mentionsFlag(msg, name string) bool {
	flag := "--" + name
	for s := msg; ; {
		i := strings.Index(s, flag)
		if i < 0 {
			return false
		}
		s = s[i+len(flag):]
		if s == "" || !isFlagChar(s[0]) {
			return true
		}
	}
}

func isFlagChar(c byte) bool { return c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// checkPlan says, before the sweep, when a re-run of a trace's config would not
// sweep the trace's plan: flags given on the command line change it, or this
// ceiling's defaults differ from those of the one that recorded it.
func (rc *runConfig) checkPlan(w io.Writer, opts record.Options) {
	if rc == nil || rc.from == nil {
		return
	}
	was, _ := json.Marshal(rc.from.Plan)
	now, _ := json.Marshal(opts.Plan())
	if !bytes.Equal(was, now) {
		fmt.Fprintf(w, "note: the plan differs from %s's (was %s, now %s): flags given here change it, or this ceiling's defaults differ from %s's\n",
			strings.TrimSuffix(rc.source, " (its stored config)"), was, now, rc.from.Version)
	}
}
