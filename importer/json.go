package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Python's json module writes the non-standard tokens Infinity, -Infinity and NaN
// (SGLang's "request_rate": Infinity). lenient rewrites them, outside strings, as
// the strings "Infinity", "-Infinity" and "NaN", which the number getters accept.
func lenient(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	var out bytes.Buffer
	out.Grow(len(data) + 64)
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case bytes.HasPrefix(data[i:], []byte("-Infinity")):
			out.WriteString(`"-Infinity"`)
			i += len("-Infinity") - 1
			continue
		case bytes.HasPrefix(data[i:], []byte("Infinity")):
			out.WriteString(`"Infinity"`)
			i += len("Infinity") - 1
			continue
		case bytes.HasPrefix(data[i:], []byte("NaN")):
			out.WriteString(`"NaN"`)
			i += len("NaN") - 1
			continue
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}

// object is one decoded JSON object with the place it came from, so that every
// error names the file (and line) and the field.
type object struct {
	where string
	m     map[string]json.RawMessage
}

// decodeObject decodes data (one JSON object) found at where.
func decodeObject(where string, data []byte) (object, error) {
	o := object{where: where}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return o, fmt.Errorf("%s: not a JSON object", where)
	}
	if err := json.Unmarshal(lenient(data), &o.m); err != nil {
		return o, fmt.Errorf("%s: invalid JSON: %v", where, err)
	}
	return o, nil
}

// readLines returns the non-empty lines of a JSON Lines file.
func readLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	var lines [][]byte
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			lines = append(lines, bytes.Clone(l))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return lines, nil
}

func (o object) has(k string) bool {
	v, ok := o.m[k]
	return ok && string(v) != "null"
}

func (o object) fieldErr(k string, format string, args ...any) error {
	return fmt.Errorf("%s: field %q: %s", o.where, k, fmt.Sprintf(format, args...))
}

// num decodes a number that may also be the string "inf"/"Infinity" (vLLM and
// SGLang write an infinite request rate that way) or "NaN".
func parseNum(raw json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return f, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("want a number, got %s", abbreviate(raw))
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "inf", "infinity", "+inf":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	case "nan":
		return math.NaN(), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, nil
	}
	return 0, fmt.Errorf("want a number, got %s", abbreviate(raw))
}

// float returns field k as a number; ok is false when it is absent or null.
func (o object) float(k string) (v float64, ok bool, err error) {
	if !o.has(k) {
		return 0, false, nil
	}
	v, err = parseNum(o.m[k])
	if err != nil {
		return 0, false, o.fieldErr(k, "%v", err)
	}
	return v, true, nil
}

// int returns field k as a whole number.
func (o object) int(k string) (v int, ok bool, err error) {
	if o.has(k) {
		// Epoch nanoseconds need all 64 bits: parse integers exactly.
		if n, err := strconv.ParseInt(string(o.m[k]), 10, 64); err == nil {
			return int(n), true, nil
		}
	}
	f, ok, err := o.float(k)
	if err != nil || !ok {
		return 0, ok, err
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return 0, false, o.fieldErr(k, "want a whole number, got %s", abbreviate(o.m[k]))
	}
	return int(f), true, nil
}

func (o object) str(k string) (string, bool, error) {
	if !o.has(k) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(o.m[k], &s); err != nil {
		return "", false, o.fieldErr(k, "want a string, got %s", abbreviate(o.m[k]))
	}
	return s, true, nil
}

// text returns field k as a string whatever its JSON type (for labels).
func (o object) text(k string) string {
	if s, ok, err := o.str(k); err == nil && ok {
		return s
	}
	if o.has(k) {
		return string(o.m[k])
	}
	return ""
}

func (o object) obj(k string) (object, bool, error) {
	if !o.has(k) {
		return object{}, false, nil
	}
	sub, err := decodeObject(o.where+": "+k, o.m[k])
	if err != nil {
		return object{}, false, o.fieldErr(k, "want an object, got %s", abbreviate(o.m[k]))
	}
	return sub, true, nil
}

func (o object) array(k string) ([]json.RawMessage, bool, error) {
	if !o.has(k) {
		return nil, false, nil
	}
	var a []json.RawMessage
	if err := json.Unmarshal(o.m[k], &a); err != nil {
		return nil, false, o.fieldErr(k, "want an array, got %s", abbreviate(o.m[k]))
	}
	return a, true, nil
}

func (o object) floats(k string) ([]float64, bool, error) {
	a, ok, err := o.array(k)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := make([]float64, len(a))
	for i, raw := range a {
		if out[i], err = parseNum(raw); err != nil {
			return nil, false, o.fieldErr(k, "element %d: %v", i, err)
		}
	}
	return out, true, nil
}

func (o object) floatLists(k string) ([][]float64, bool, error) {
	a, ok, err := o.array(k)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := make([][]float64, len(a))
	for i, raw := range a {
		var inner []json.RawMessage
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, false, o.fieldErr(k, "element %d: want an array of numbers, got %s", i, abbreviate(raw))
		}
		out[i] = make([]float64, len(inner))
		for j, r := range inner {
			if out[i][j], err = parseNum(r); err != nil {
				return nil, false, o.fieldErr(k, "element %d.%d: %v", i, j, err)
			}
		}
	}
	return out, true, nil
}

func (o object) strs(k string) ([]string, bool, error) {
	a, ok, err := o.array(k)
	if err != nil || !ok {
		return nil, ok, err
	}
	out := make([]string, len(a))
	for i, raw := range a {
		if string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, false, o.fieldErr(k, "element %d: want a string, got %s", i, abbreviate(raw))
		}
	}
	return out, true, nil
}

func abbreviate(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
