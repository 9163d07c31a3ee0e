// Package realserver starts a real llama.cpp llama-server for tests: the binary and the
// random-weight model that .ci/llama.sh builds, listening on 127.0.0.1, stopped by PID
// when the test ends.
//
// Tests find the binary and model through $LLAMA_SERVER and $LLAMA_MODEL (`make test`
// sets both). When they are missing the test is skipped with a message, except under
// CI=true, where a missing real server is a failure: CI must prove the real thing.
package realserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options shape the server. The defaults are those of the tests in docs/testing.md: 4 slots
// sharing an 8192-token KV context.
type Options struct {
	Slots   int    // -np (default 4)
	Context int    // -c, total KV tokens shared by the slots (default 8192)
	Alias   string // -a, the model id the server reports (default "tiny-d64")
	// Unified passes --kv-unified: the slots share one cache of Context tokens
	// (each slot's n_ctx is the whole cache); without it each slot owns Context ÷
	// Slots tokens.
	Unified bool
	// Threads is -t, the server's compute threads (default 2). One thread makes
	// the server's compute the bottleneck on a small machine whatever the
	// clients do with the other cores, which a comparison of two ways of loading
	// it needs.
	Threads int
	// Model is the GGUF to serve (default $LLAMA_MODEL, the d64 model); see
	// ModelPath for the others .ci/llama.sh makes.
	Model string
}

// Server is a running llama-server.
type Server struct {
	URL string // base URL without /v1, e.g. http://127.0.0.1:38211
	PID int
}

// syncBuffer keeps the server's output for the failure message; the process writes
// it from another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 { // keep memory bounded on a chatty server
		s.b.Reset()
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ModelPath is the path of .ci/llama.sh's random-weight model name (d64 or d768):
// $LLAMA_MODEL_D768 (or _D64, upper case), or else tiny-NAME.gguf beside
// $LLAMA_MODEL, where .ci/llama.sh writes them all. A test never builds llama.cpp
// nor writes a model itself (minutes of compiling inside a test run, on a machine
// that may not have the tools): a missing model is a skip outside CI and a failure
// in it, as for Start, saying how to make it.
func ModelPath(t testing.TB, name string) string {
	t.Helper()
	path, err := modelPath(name)
	if err != nil {
		missing(t, err.Error())
	}
	return path
}

// modelPath is ModelPath without the testing.TB: the model's path, or why it is
// not there.
func modelPath(name string) (string, error) {
	env := "LLAMA_MODEL_" + strings.ToUpper(name)
	howTo := fmt.Sprintf("make it with `.ci/llama.sh model %s` (or `make test`)", name)
	if p := os.Getenv(env); p != "" {
		if info, err := os.Stat(p); err != nil || info.Size() == 0 {
			return "", fmt.Errorf("%s=%s is not a model file (%v); %s", env, p, err, howTo)
		}
		return p, nil
	}
	base := os.Getenv("LLAMA_MODEL")
	if base == "" {
		return "", fmt.Errorf("neither %s nor LLAMA_MODEL is set; %s", env, howTo)
	}
	p := filepath.Join(filepath.Dir(base), "tiny-"+name+".gguf")
	if info, err := os.Stat(p); err != nil || info.Size() == 0 {
		return "", fmt.Errorf("model %s not found beside LLAMA_MODEL at %s and %s is not set; %s", name, p, env, howTo)
	}
	return p, nil
}

// Start starts llama-server and waits until /health answers. The server is killed
// by PID in t.Cleanup.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	bin, model := serverPaths(t)
	if opt.Model != "" {
		model = opt.Model
		if _, err := os.Stat(model); err != nil {
			missing(t, fmt.Sprintf("%s: %v", model, err))
		}
	}
	if opt.Slots == 0 {
		opt.Slots = 4
	}
	if opt.Context == 0 {
		opt.Context = 8192
	}
	if opt.Threads == 0 {
		opt.Threads = 2
	}
	if opt.Alias == "" {
		opt.Alias = "tiny-d64"
	}
	port := freePort(t)
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"-a", opt.Alias, "-np", strconv.Itoa(opt.Slots), "-c", strconv.Itoa(opt.Context),
		"--metrics", "--no-webui", "-t", strconv.Itoa(opt.Threads), "--no-jinja", "--chat-template", "chatml",
		"--override-kv", "llama.context_length=int:2048")
	if opt.Unified {
		cmd.Args = append(cmd.Args, "--kv-unified")
	}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = serverProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), PID: cmd.Process.Pid}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("llama-server exited before it was ready: %v\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("llama-server not ready after 60s\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serverPaths are $LLAMA_SERVER and $LLAMA_MODEL, both present; without them
// the test is skipped (failed in CI).
func serverPaths(t testing.TB) (bin, model string) {
	t.Helper()
	bin, model = os.Getenv("LLAMA_SERVER"), os.Getenv("LLAMA_MODEL")
	if bin == "" || model == "" {
		missing(t, "LLAMA_SERVER and LLAMA_MODEL are not set (run `make test`, which builds them with .ci/llama.sh)")
	}
	for _, p := range []string{bin, model} {
		if _, err := os.Stat(p); err != nil {
			missing(t, fmt.Sprintf("%s: %v", p, err))
		}
	}
	return bin, model
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("real llama.cpp server required in CI: %s", why)
	}
	t.Skipf("no real llama.cpp server: %s", why)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
