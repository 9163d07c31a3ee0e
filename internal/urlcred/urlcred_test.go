package urlcred

import (
	"strings"
	"testing"
)

// TestStrip: no user, password, query or fragment survives, parseable or not.
func TestStrip(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://gpu-box:8000", "http://gpu-box:8000"},
		{"http://user:s3cret@gpu-box:8000/v1", "http://gpu-box:8000/v1"},
		{"https://gpu-box/v1?api_key=s3cret#frag", "https://gpu-box/v1"},
		{"http://user:s3cret@gpu box:8000", "http://gpu box:8000"}, // unparseable: cut at the last @
		{"%zz", "%zz"},
	} {
		got := Strip(tt.in)
		if got != tt.want || strings.Contains(got, "s3cret") {
			t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
