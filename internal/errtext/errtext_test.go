package errtext

import (
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"request (256 tokens) exceeds 128", "request (300 tokens) exceeds 4096"},
		{"HTTP 400", "HTTP 500"},
	} {
		if Key(tc.a) != Key(tc.b) {
			t.Errorf("Key(%q) = %q, Key(%q) = %q: want them equal", tc.a, Key(tc.a), tc.b, Key(tc.b))
		}
	}
	if Key("a 1") == Key("b 1") {
		t.Error("texts differing in words share a key")
	}
}

func TestClip(t *testing.T) {
	if got := Clip("a\n  b\tc", 10); got != "a b c" {
		t.Errorf("Clip = %q, want one line", got)
	}
	if got := Clip(strings.Repeat("é", 12), 10); got != strings.Repeat("é", 10)+"…" {
		t.Errorf("Clip = %q, want 10 runes and an ellipsis", got)
	}
}
