package safetext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLineAndText(t *testing.T) {
	tests := []struct {
		name, in, line, text string
	}{
		{"plain", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},
		{"unicode kept", "模型 ü ✓", "模型 ü ✓", "模型 ü ✓"},
		{"OSC title", "m\x1b]0;pwned\x07", `m\x1b]0;pwned\x07`, `m\x1b]0;pwned\x07`},
		{"CSI clear", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"carriage return", "ok\rFAKE", "ok FAKE", `ok\rFAKE`},
		{"CRLF", "a\r\nb", "a  b", "a\nb"},
		{"line break and tab", "a\nb\tc", "a b c", "a\nb\tc"},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"bidi override", "invoice\u202eexe.txt", `invoice\u202eexe.txt`, `invoice\u202eexe.txt`},
		{"bidi isolates and marks", "\u2066\u2067\u2068\u2069\u200e\u200f\u061c", `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`, `\u2066\u2067\u2068\u2069\u200e\u200f\u061c`},
		{"embeddings", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`, `\u202a\u202b\u202c\u202d`},
		{"separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb", "a\uFFFDb"},
		{"NUL", "a\x00b", `a\x00b`, `a\x00b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := Line(Line(tt.in)); got != Line(tt.in) {
				t.Errorf("Line is not idempotent on %q: %q then %q", tt.in, Line(tt.in), got)
			}
		})
	}
}

// TestNoControlSurvives runs every rune below U+3000 through Line and checks that
// no control character of any kind the package names is left.
func TestNoControlSurvives(t *testing.T) {
	var b strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		b.WriteRune(r)
	}
	out := Line(b.String())
	for _, r := range out {
		if r < 0x20 || r == 0x7f || isControl(r) {
			t.Errorf("U+%04X survived Line", r)
		}
	}
}

// TestEscapedKeepsJSONValues: the escaped JSON decodes to the same value and holds none of
// the controls raw.
func TestEscapedKeepsJSONValues(t *testing.T) {
	in := map[string]string{"model": "m\u009b2J\u202eexe\x7f\u2066\x1b\n✓"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := Escaped(raw)
	for _, c := range []string{"\u009b", "\u202e", "\x7f", "\u2066", "\x1b"} {
		if strings.Contains(string(out), c) {
			t.Errorf("%q holds %q raw", out, c)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["model"] != in["model"] {
		t.Errorf("decoded %q (%v), want %q", back["model"], err, in["model"])
	}
}

// TestEscapedHTML: raw controls in HTML text are written as escapes, the markup
// itself and its line breaks left alone.
func TestEscapedHTML(t *testing.T) {
	in := "<p>m\x1b]0;t\x07\u202eexe</p>\r\n<td>\tok</td>"
	want := `<p>m\u001b]0;t\u0007\u202eexe</p>` + "\r\n<td>\tok</td>"
	if got := string(Escaped([]byte(in))); got != want {
		t.Errorf("Escaped(%q) = %q, want %q", in, got, want)
	}
}
