package realserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelPathNeverBuilds: the d768 model is found from the environment (its own
// variable, or beside LLAMA_MODEL), and a missing one is an error saying how to make
// it, never a build: the PATH holds no tool, so a call of .ci/llama.sh (which needs
// cmake, git, npm) would fail differently, and the model files are checked as
// written, not made.
func TestModelPathNeverBuilds(t *testing.T) {
	dir := t.TempDir()
	d64 := filepath.Join(dir, "tiny-d64.gguf")
	d768 := filepath.Join(dir, "tiny-d768.gguf")
	if err := os.WriteFile(d64, []byte("gguf"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "x.gguf")
	if err := os.WriteFile(other, []byte("gguf"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	for _, tt := range []struct {
		name, model, own string
		want             string // the path, or "" for an error
		errHas           string
	}{
		{"own variable", "", other, other, ""},
		{"own variable, no file", d64, filepath.Join(dir, "none.gguf"), "", "LLAMA_MODEL_D768="},
		{"beside LLAMA_MODEL, missing", d64, "", "", "not found beside LLAMA_MODEL"},
		{"nothing set", "", "", "", "neither LLAMA_MODEL_D768 nor LLAMA_MODEL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LLAMA_MODEL", tt.model)
			t.Setenv("LLAMA_MODEL_D768", tt.own)
			got, err := modelPath("d768")
			if got != tt.want || (tt.want == "") != (err != nil) {
				t.Fatalf("modelPath = %q, %v; want %q", got, err, tt.want)
			}
			if err != nil && (!strings.Contains(err.Error(), tt.errHas) || !strings.Contains(err.Error(), ".ci/llama.sh model d768")) {
				t.Errorf("error %q does not say %q and how to make the model", err, tt.errHas)
			}
		})
	}
	if _, err := os.Stat(d768); err == nil {
		t.Fatal("modelPath wrote the d768 model")
	}
	// Once written beside LLAMA_MODEL (as .ci/llama.sh does), it is found there.
	if err := os.WriteFile(d768, []byte("gguf"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LLAMA_MODEL", d64)
	t.Setenv("LLAMA_MODEL_D768", "")
	if got, err := modelPath("d768"); got != d768 || err != nil {
		t.Errorf("modelPath = %q, %v; want %q", got, err, d768)
	}
}
