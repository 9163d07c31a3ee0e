package client

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// The separate-process engine: BenchmarkClientPacedProc re-executes this test
// binary with benchEngineEnv=1, and TestMain then runs only an enginetest server.
const (
	benchEngineEnv = "CEILING_BENCH_ENGINE" // "1": serve a bench engine instead of testing
	benchGapEnv    = "CEILING_BENCH_GAP"    // the engine's TokenGap, a time.Duration
	// benchPinEnv "0" turns off the CPU pinning of BenchmarkClientPacedProc.
	benchPinEnv = "CEILING_BENCH_PIN"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchEngineEnv) == "1" {
		if err := serveBenchEngine(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench engine:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// engineRecord is one request of the engine process's log, as it sends it back.
type engineRecord struct {
	Prompt   int     `json:"p"` // prompt tokens, which tell the requests apart
	Received int64   `json:"r"` // Unix ns
	Sent     []int64 `json:"s"` // each token chunk's send time, Unix ns
}

// serveBenchEngine runs the engine process: it starts an engine with chunk times
// recorded, writes its URL as the first line of stdout, and when stdin reaches EOF
// (the benchmark closed it, or died) or on SIGTERM writes its log to stdout as one
// engineRecord JSON object a line, then returns.
func serveBenchEngine(stdin io.Reader, stdout io.Writer) error {
	gap, err := time.ParseDuration(os.Getenv(benchGapEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", benchGapEnv, err)
	}
	eng, err := enginetest.Start(enginetest.Config{Model: "bench", RecordChunkTimes: true, TokenGap: gap})
	if err != nil {
		return err
	}
	defer eng.Kill()
	if _, err := fmt.Fprintln(stdout, eng.URL()); err != nil {
		return fmt.Errorf("writing the URL: %w", err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-stop:
	case <-eof:
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	for _, e := range eng.Log() {
		r := engineRecord{Prompt: e.PromptTokens, Received: e.Received.UnixNano(), Sent: make([]int64, len(e.ChunkTimes))}
		for i, t := range e.ChunkTimes {
			r.Sent[i] = t.UnixNano()
		}
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("writing the log: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the log: %w", err)
	}
	return nil
}

// BenchmarkClientPacedProc is BenchmarkClientPaced with the engine in a separate
// process, so that the timestamp error is not inflated by the engine's goroutines
// competing with the recorder's for one Go scheduler (the engine takes its send
// time, then may wait for a P before it writes). Where taskset exists (util-linux)
// and the machine has 2 CPUs or more, the engine is pinned to CPU 0 with
// GOMAXPROCS=1 and the benchmark to the other CPUs for the run; CEILING_BENCH_PIN=0
// turns that off. Both processes still share the machine with whatever else runs.
//
//	go test ./record/internal/client -run '^$' -bench 'ClientPaced' -benchtime 3x
func BenchmarkClientPacedProc(b *testing.B) {
	for _, c := range []struct {
		streams int
		gap     time.Duration
	}{{1024, 20 * time.Millisecond}, {4096, 40 * time.Millisecond}, {4096, 80 * time.Millisecond}} {
		b.Run(fmt.Sprintf("streams=%d/gap=%s", c.streams, c.gap), func(b *testing.B) {
			taskset := benchTaskset(b)
			eng := startProcEngine(b, c.gap, taskset)
			if taskset != "" {
				pinSelf(b, taskset)
			}
			runWaves(b, eng.url, c.streams, pacedTokens(c.gap), c.gap, false, eng.sent)
		})
	}
}

// benchTaskset returns the taskset path when the benchmark should pin CPUs.
func benchTaskset(b *testing.B) string {
	if os.Getenv(benchPinEnv) == "0" || runtime.NumCPU() < 2 {
		return ""
	}
	path, err := exec.LookPath("taskset")
	if err != nil {
		b.Logf("not pinning CPUs: %v", err)
		return ""
	}
	return path
}

// procEngine is an engine running in a child process (see serveBenchEngine).
type procEngine struct {
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startProcEngine starts the engine process, pinned to CPU 0 with taskset when
// taskset is not "". b.Cleanup kills it.
func startProcEngine(b *testing.B, gap time.Duration, taskset string) *procEngine {
	self, err := os.Executable()
	if err != nil {
		b.Fatalf("locating the test binary: %v", err)
	}
	args := []string{self, "-test.run=^$"}
	env := append(os.Environ(), benchEngineEnv+"=1", benchGapEnv+"="+gap.String())
	if taskset != "" {
		// taskset execs the binary, so the child's PID is the engine's.
		args = append([]string{taskset, "-c", "0"}, args...)
		env = append(env, "GOMAXPROCS=1")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting the engine process: %v", err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	p := &procEngine{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	line, err := p.out.ReadString('\n')
	if err != nil {
		b.Fatalf("reading the engine process's URL: %v", err)
	}
	p.url = strings.TrimSpace(line)
	if !strings.HasPrefix(p.url, "http://") {
		b.Fatalf("engine process printed %q, want its URL", p.url)
	}
	return p
}

// sent is a sentLog: it stops the engine process and reads its log.
func (p *procEngine) sent(since time.Time) (map[int][]int64, error) {
	if err := p.stdin.Close(); err != nil {
		return nil, fmt.Errorf("stopping the engine process: %w", err)
	}
	out := map[int][]int64{}
	dec := json.NewDecoder(p.out)
	for {
		var r engineRecord
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the engine process's log: %w", err)
		}
		if r.Received >= since.UnixNano() {
			out[r.Prompt] = r.Sent
		}
	}
	if err := p.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("engine process: %w", err)
	}
	return out, nil
}

// pinSelf moves every thread of this process off CPU 0 (the engine's), with
// GOMAXPROCS to match, until the benchmark ends.
func pinSelf(b *testing.B, taskset string) {
	pid := strconv.Itoa(os.Getpid())
	out, err := exec.Command(taskset, "-p", pid).Output()
	if err != nil {
		b.Fatalf("taskset -p %s: %v", pid, err)
	}
	// "pid 123's current affinity mask: 3"
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		b.Fatalf("taskset -p %s printed nothing", pid)
	}
	mask := fields[len(fields)-1]
	n := runtime.NumCPU()
	cpus := "1"
	if n > 2 {
		cpus = fmt.Sprintf("1-%d", n-1)
	}
	// -a sets every thread; threads started later inherit the mask.
	if out, err := exec.Command(taskset, "-a", "-p", "-c", cpus, pid).CombinedOutput(); err != nil {
		b.Fatalf("taskset -a -p -c %s %s: %v: %s (CEILING_BENCH_PIN=0 turns pinning off)", cpus, pid, err, out)
	}
	prev := runtime.GOMAXPROCS(n - 1)
	b.Cleanup(func() {
		runtime.GOMAXPROCS(prev)
		if out, err := exec.Command(taskset, "-a", "-p", mask, pid).CombinedOutput(); err != nil {
			b.Errorf("restoring the CPU mask %s: %v: %s", mask, err, out)
		}
	})
}
