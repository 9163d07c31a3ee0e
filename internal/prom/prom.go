// Package prom parses the Prometheus text exposition format (version 0.0.4, as
// vLLM, SGLang, llama.cpp, TGI, NIM and Triton serve it at /metrics) into samples.
// It keeps every sample line; which series matter is for its callers to decide.
package prom

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sample is one sample line: a series and its value. Histogram and summary
// families give one sample per line, as printed (name_bucket{le=...}, name_sum,
// name_count).
type Sample struct {
	// Name is the metric name, colons included (vllm:num_requests_running).
	Name string
	// Labels is the canonical label text `a="x",b="y"`: sorted by name, values
	// escaped as the format escapes them (\\, \" and \n). "" without labels.
	Labels string
	Value  float64
}

// maxLineBytes bounds one line; a longer one is a reading error.
const maxLineBytes = 4 << 20

// maxReported is how many bad lines an error lists.
const maxReported = 5

// Parse reads a whole exposition. Comment, HELP and TYPE lines and blank lines are
// skipped. A line it cannot read is left out and reported in the error, with the
// other samples still returned: one odd line must not cost a scrape.
func Parse(r io.Reader) ([]Sample, error) {
	var (
		out  []Sample
		bad  []string
		nbad int
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := ParseLine(line)
		if err != nil {
			nbad++
			if len(bad) < maxReported {
				bad = append(bad, fmt.Sprintf("line %d: %v", n, err))
			}
			continue
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading metrics: %w", err)
	}
	if nbad > 0 {
		more := ""
		if nbad > len(bad) {
			more = fmt.Sprintf(" (and %d more)", nbad-len(bad))
		}
		return out, fmt.Errorf("%d unreadable metric lines: %s%s", nbad, strings.Join(bad, "; "), more)
	}
	return out, nil
}

// ParseLine reads one sample line, `name{labels} value [timestamp]`, optionally
// followed by an OpenMetrics exemplar (`# {trace_id="..."} 1`), which is ignored.
func ParseLine(line string) (Sample, error) {
	var s Sample
	i := 0
	for i < len(line) && line[i] != '{' && line[i] != ' ' && line[i] != '\t' {
		i++
	}
	s.Name = line[:i]
	if s.Name == "" {
		return s, errors.New("no metric name")
	}
	rest := strings.TrimLeft(line[i:], " \t")
	if strings.HasPrefix(rest, "{") {
		labels, n, err := scanLabels(rest)
		if err != nil {
			return s, fmt.Errorf("%s: %w", s.Name, err)
		}
		s.Labels = labels
		rest = rest[n:]
	}
	if j := strings.Index(rest, " # "); j >= 0 {
		rest = rest[:j]
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 {
		return s, fmt.Errorf("%s: want a value and an optional timestamp after the name, got %q", s.Name, rest)
	}
	v, err := ParseValue(fields[0])
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.Name, err)
	}
	if len(fields) == 2 {
		if _, err := strconv.ParseFloat(fields[1], 64); err != nil {
			return s, fmt.Errorf("%s: bad timestamp %q", s.Name, fields[1])
		}
	}
	s.Value = v
	return s, nil
}

// ParseValue reads a sample value: a Go float (3-digit exponents like e+011
// included), +Inf, -Inf or NaN. The NaN spellings of C printf (nan, -nan) and of
// MSVC (-nan(ind), nan(snan)) are NaN too: llama.cpp prints what its C library does.
func ParseValue(f string) (float64, error) {
	switch f {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	if isNaN(f) {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 0, fmt.Errorf("bad value %q", f)
	}
	return v, nil
}

// isNaN recognises [+-]nan with an optional parenthesised tag, any case.
func isNaN(f string) bool {
	f = strings.TrimLeft(f, "+-")
	if len(f) < 3 || !strings.EqualFold(f[:3], "nan") {
		return false
	}
	tag := f[3:]
	return tag == "" || (strings.HasPrefix(tag, "(") && strings.HasSuffix(tag, ")"))
}

// scanLabels reads `{a="x",b="y"}` at the start of s, honouring escapes inside the
// quoted values; it returns the canonical label text and the bytes consumed.
func scanLabels(s string) (string, int, error) {
	type kv struct{ k, v string }
	var pairs []kv
	i := 1
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			return "", 0, errors.New("labels not closed with }")
		}
		if s[i] == '}' {
			i++
			break
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		key := s[start:i]
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != '=' || key == "" {
			return "", 0, fmt.Errorf("label %q has no =", key)
		}
		i++
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != '"' {
			return "", 0, fmt.Errorf("label %s: value not quoted", key)
		}
		i++
		var b strings.Builder
		closed := false
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				switch s[i+1] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			if c == '"' {
				closed = true
				i++
				break
			}
			b.WriteByte(c)
			i++
		}
		if !closed {
			return "", 0, fmt.Errorf("label %s: value not closed with \"", key)
		}
		pairs = append(pairs, kv{key, b.String()})
	}
	sort.Slice(pairs, func(a, b int) bool { return pairs[a].k < pairs[b].k })
	var out strings.Builder
	for j, p := range pairs {
		if j > 0 {
			out.WriteByte(',')
		}
		out.WriteString(p.k)
		out.WriteString(`="`)
		out.WriteString(escaper.Replace(p.v))
		out.WriteByte('"')
	}
	return out.String(), i, nil
}

// escaper escapes a label value as the format does.
var escaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// ParseLabels turns canonical label text (Sample.Labels) back into a map.
func ParseLabels(text string) map[string]string {
	m := map[string]string{}
	if text == "" {
		return m
	}
	s := "{" + text + "}"
	i := 1
	for i < len(s) && s[i] != '}' {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			break
		}
		key := s[i : i+eq]
		i += eq + 2 // skip ="
		var b strings.Builder
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' && i+1 < len(s) {
				if s[i+1] == 'n' {
					b.WriteByte('\n')
				} else {
					b.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		m[key] = b.String()
		i++ // closing quote
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	return m
}
