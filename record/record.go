package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/ceiling-llm/ceiling/internal/safetext"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/record/internal/probe"
	"github.com/ceiling-llm/ceiling/record/internal/workload"
	"github.com/ceiling-llm/ceiling/trace"
)

// recorder is the state of one recording.
type recorder struct {
	opts     Options
	client   *client.Client
	workload *workload.Workload
	parts    *trace.Parts
	info     trace.RunInfo
	tmpParts bool // parts in a temporary directory (-o -)

	metrics heldMetrics // scraped since the last seal (metricsheld.go)

	nextID int64
	// kvCap is the most KV tokens the server declared it holds (0 = unknown): its
	// one figure, or the upper bound of a range (kvdeclared.go).
	kvCap int64
	// modelsStatus is the status of GET /v1/models, for the probe request's errors.
	modelsStatus int
	// lastRows are the rows of the level just run, not yet sealed.
	lastRows []trace.Row
	// replay is the trace --replay sends (nil: none).
	replay       []replayEntry
	replayFormat string // the replay's format, told from the file when not given
	// minTokens: send min_tokens = max_tokens (--ignore-eos on a server that takes it).
	minTokens bool

	warnMu   sync.Mutex
	warnings []string // the first maxWarnings, for the run info
	warned   int      // how many in all
}

// maxWarnings bounds the warnings printed and kept in the run info.
const maxWarnings = 20

// warn reports something the run info should say (a server's answer not believed),
// on the progress output and in RunInfo.Warnings, the first maxWarnings of them.
func (r *recorder) warn(msg string) {
	r.warnMu.Lock()
	defer r.warnMu.Unlock()
	r.warned++
	switch {
	case r.warned <= maxWarnings:
		// A warning may quote the server: it is stored as it is shown.
		msg = safetext.Text(msg)
		r.warnings = append(r.warnings, msg)
		r.progress("warning: %s", msg)
	case r.warned == maxWarnings+1:
		r.progress("warning: more warnings follow; the count is in the run info")
	}
}

// warningsSoFar is what RunInfo.Warnings says now.
func (r *recorder) warningsSoFar() []string {
	r.warnMu.Lock()
	defer r.warnMu.Unlock()
	w := slices.Clone(r.warnings)
	if r.warned > len(w) {
		w = append(w, fmt.Sprintf("and %d more warnings", r.warned-len(w)))
	}
	return w
}

// Record runs a whole recording: probe the server, calibrate the workload, sweep
// the levels into sealed parts, and merge them into the trace. It returns the run
// info even on failure, once the sweep has started, and the trace then holds every
// row recorded. ctx cancellation (Ctrl-C) is an orderly stop.
func Record(ctx context.Context, opts Options) (trace.RunInfo, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return trace.RunInfo{}, err
	}
	if opts.Progress != nil {
		// The interrupt watcher and a level's ticker write lines concurrently; the
		// writer need not be safe for that (a bytes.Buffer in a test is not).
		opts.Progress = &lockedWriter{w: opts.Progress}
	}
	r := &recorder{opts: opts}
	started := time.Now().UTC()
	if opts.Replay != "" {
		es, format, err := loadReplay(opts.Replay, opts.ReplayFormat, opts.replayBlockTokens())
		if err != nil {
			return trace.RunInfo{}, err
		}
		r.replay, r.replayFormat = es, format
	}

	// One recorder per output: the lock comes before --resume or --force looks at
	// the parts directory, which a live run is still writing.
	if opts.Output != "-" {
		lock, stale, err := lockOutput(opts.Output)
		if err != nil {
			return trace.RunInfo{}, err
		}
		defer lock.release()
		if stale.pid != 0 {
			r.progress("the lock of %s %s: taken over", opts.Output, stale)
		}
	}

	// The output must be writable before anything is asked of the server.
	var resume *trace.Resumed
	if opts.Output == "-" {
		dir, err := os.MkdirTemp("", "ceiling-parts-")
		if err != nil {
			return trace.RunInfo{}, fmt.Errorf("creating temporary parts directory: %w", err)
		}
		defer os.RemoveAll(dir)
		ps, err := trace.CreateParts(filepath.Join(dir, "parts"))
		if err != nil {
			return trace.RunInfo{}, err
		}
		r.parts, r.tmpParts = ps, true
	} else if opts.Resume {
		// The merge at the end replaces the output: never a link, a device or an input.
		g := outputGuard(opts)
		g.Force = true
		if err := g.Check(opts.Output); err != nil {
			return trace.RunInfo{}, fmt.Errorf("Options.Resume: %w", err)
		}
		if err := checkSidecar(opts); err != nil {
			return trace.RunInfo{}, fmt.Errorf("Options.Resume: %w", err)
		}
		ps, st, err := trace.ResumeParts(trace.PartsDir(opts.Output))
		if err != nil {
			return trace.RunInfo{}, partsAdvice(fmt.Errorf("Options.Resume: %w", err))
		}
		r.parts, resume = ps, &st
	} else {
		if err := checkWritable(opts.Output); err != nil {
			return trace.RunInfo{}, err
		}
		if err := outputGuard(opts).Check(opts.Output); err != nil {
			// The guard names its own field; the caller set ours.
			return trace.RunInfo{}, errors.New(strings.ReplaceAll(err.Error(), "Guard.Force", "Options.Force"))
		}
		if err := checkSidecar(opts); err != nil {
			return trace.RunInfo{}, err
		}
		if opts.Force {
			if err := trace.RemoveParts(trace.PartsDir(opts.Output)); err != nil {
				return trace.RunInfo{}, err
			}
		}
		ps, err := trace.CreateParts(trace.PartsDir(opts.Output))
		if err != nil {
			return trace.RunInfo{}, partsAdvice(err)
		}
		r.parts = ps
	}
	if opts.Seed == 0 {
		// No seed given: a fresh one, so that a second run sends prompts no server's
		// prefix cache has seen; --resume continues the interrupted run's.
		opts.Seed = freshSeed()
		if opts.Shard.Sharded() {
			// The shards of one sweep run one plan: their common seed comes from the
			// run id they share (each then draws from its own split of it).
			opts.Seed = sharedSeed(opts.RunID)
		}
		if resume != nil {
			opts.Seed = resume.Info.Plan.Seed
		}
		if opts.Config != nil {
			opts.Config = maps.Clone(opts.Config)
			opts.Config["seed"] = strconv.FormatUint(opts.Seed, 10)
		}
		r.opts = opts
	}
	cleanupOnEarlyError := func(err error) (trace.RunInfo, error) {
		if !r.tmpParts && resume == nil {
			r.parts.Remove()
		}
		return trace.RunInfo{}, err
	}

	cl, err := client.New(client.Options{
		BaseURL:        opts.URL,
		Endpoint:       opts.Endpoint,
		APIKey:         opts.APIKey,
		Timeout:        opts.Timeout,
		RequestTimeout: opts.RequestTimeout,
		ProbeTimeout:   opts.ProbeTimeout,
		Model:          opts.Model,
		IgnoreEOS:      opts.IgnoreEOS,
		MaxConns:       r.maxConcurrency(),
		Insecure:       opts.Insecure,
	})
	if err != nil {
		return cleanupOnEarlyError(err)
	}
	defer cl.Close()
	r.client = cl

	pr, err := probe.Server(ctx, cl)
	if err != nil {
		return cleanupOnEarlyError(r.explain(err))
	}
	r.modelsStatus = pr.ModelsStatus
	for _, n := range pr.Notes {
		r.warn(n)
	}
	if pr.ModelsErr != nil {
		r.progress("note: %v; going on with --model %s", pr.ModelsErr, cl.Redact(opts.Model))
	}
	if opts.Model == "" {
		if pr.ModelsStatus != http.StatusOK {
			return cleanupOnEarlyError(fmt.Errorf("GET %s/v1/models answered HTTP %d %s: no OpenAI-compatible API there (a wrong port, or a path prefix missing from Options.URL?); if the server has no model list, give Options.Model",
				cl.BaseURL(), pr.ModelsStatus, http.StatusText(pr.ModelsStatus)))
		}
		if len(pr.Models) == 0 {
			return cleanupOnEarlyError(errors.New("the server lists no model at /v1/models: give Options.Model"))
		}
		opts.Model = pr.Models[0]
		r.opts.Model = opts.Model
	}
	cl.SetModel(opts.Model)
	if opts.MetricsURL == "" {
		opts.MetricsURL = pr.Server.MetricsURL
	} else if opts.MetricsURL == "off" {
		opts.MetricsURL = ""
	}
	r.opts.MetricsURL = opts.MetricsURL
	pr.Server.MetricsURL = client.StripCredentials(opts.MetricsURL)
	for _, u := range opts.GPUMetricsURLs {
		pr.Server.GPUMetricsURLs = append(pr.Server.GPUMetricsURLs, client.StripCredentials(u))
	}
	r.kvCap = kvCapacityBound(pr.Server)
	if kv := kvDeclared(pr.Server); kv != "" {
		r.progress("the server's KV cache: %s", kv)
	}

	// The workload must fit the context the server revealed, before any request.
	if warning, err := r.checkContext(pr.Server); err != nil {
		return cleanupOnEarlyError(err)
	} else if warning != "" {
		r.warn(warning)
	}

	// The predicted start depends on the engine's reserve, known now.
	if opts.Auto && opts.PlanStart != nil {
		if start, why := opts.PlanStart(string(pr.Server.Kind)); start > 0 {
			if err := checkFileLimit(int(start)); err != nil {
				return cleanupOnEarlyError(err)
			}
			opts.SearchStart, opts.SearchStartWhy = start, why
			r.opts.SearchStart, r.opts.SearchStartWhy = start, why
		}
	}

	// One request before the sweep: it proves the key and the model, and measures
	// how the server counts prompt tokens.
	r.progress("probing %s (model %s)", cl.BaseURL(), cl.Redact(opts.Model))
	wl, err := r.prepareWorkload(ctx, pr)
	if err != nil {
		return cleanupOnEarlyError(r.explain(err))
	}
	r.workload = wl

	hostname, _ := os.Hostname()
	r.info = trace.RunInfo{
		Tool:    "ceiling",
		Version: opts.Version,
		RunID:   newRunID(started),
		Started: started,
		Target:  trace.Target{BaseURL: cl.BaseURL(), Endpoint: opts.Endpoint, Model: cl.Redact(opts.Model)},
		Plan:    opts.plan(),
		Server:  pr.Server,
		Client: trace.ClientInfo{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
			GoVersion: runtime.Version(), Hostname: hostname},
		Declared: opts.Declared,
		Levels:   []trace.LevelInfo{},
		Workload: wl.Calibrated,
		Config:   opts.Config,
		// Which requests share which blocks of a Mooncake trace.
		ReplayPrefix: replayPrefix(r.replay, r.replayFormat, opts.replayBlockTokens()),
	}
	if r.replay != nil {
		r.info.Plan.ReplayFormat = r.replayFormat
	}
	if opts.RunID != "" {
		r.info.RunID = opts.RunID
	}
	r.nextID = opts.Shard.RequestIDBase()
	r.info.Shard = r.shardInfo(ctx)
	r.info.OutputControl, r.minTokens = outputControl(opts.IgnoreEOS, pr.Server.Kind)
	if resume != nil {
		if err := samePlan(resume.Info, r.info); err != nil {
			return trace.RunInfo{}, fmt.Errorf("Options.Resume: %w", err)
		}
		if a, b := resume.Info.Shard, r.info.Shard; (a == nil) != (b == nil) || (a != nil && (a.Index != b.Index || a.Count != b.Count)) {
			return trace.RunInfo{}, fmt.Errorf("Options.Resume: the interrupted run was %s, this one is %s", shardName(a), shardName(b))
		}
		r.info.RunID = resume.Info.RunID
		r.info.Started = resume.Info.Started
		r.info.Levels = resume.Info.Levels
		if resume.Info.Config != nil {
			r.info.Config = resume.Info.Config // the sweep as first given: the plan is checked equal
		}
		r.info.Resumed = append(resume.Info.Resumed, time.Now().UTC())
		r.nextID = resume.NextID
		r.progress("resuming %s at level %d", opts.Output, resume.NextLevel)
	}

	sweepErr := r.sweep(ctx, resumeLevel(resume))
	if errors.Is(sweepErr, errSimulatedCrash) {
		return r.info, sweepErr
	}
	var se *sealError
	if errors.As(sweepErr, &se) {
		// Merging on a failing disk would write a trace without the level; the
		// sealed levels stay in the parts directory, which --resume continues.
		if r.tmpParts {
			return r.info, fmt.Errorf("writing level %d failed: %w", se.level, se.err)
		}
		return r.info, fmt.Errorf("writing level %d failed: %w; the %d levels sealed before are kept in %s (analyze and report read it): free space or fix the directory, then run the same command with Options.Resume to record level %d again",
			se.level, se.err, len(r.info.Levels), r.parts.Dir(), se.level)
	}
	r.info.Ended = time.Now().UTC()
	if err := r.finish(); err != nil {
		again := ""
		if !r.tmpParts {
			again = ": fix the cause, then run the same recording with Options.Resume to write the trace from them"
		}
		if sweepErr != nil {
			return r.info, fmt.Errorf("%v; and writing the trace failed: %w (the sealed parts are kept in %s%s)", sweepErr, err, r.parts.Dir(), again)
		}
		return r.info, fmt.Errorf("%w (the sealed parts are kept in %s%s)", err, r.parts.Dir(), again)
	}
	return r.info, sweepErr
}

func resumeLevel(st *trace.Resumed) int {
	if st == nil {
		return 0
	}
	return st.NextLevel
}

// outputGuard is the rule for -o: never an input (the dataset or replay file),
// never anything but a regular file, an existing file only with --force. The
// sidecar beside it follows the same rule but may be replaced (it is the output's).
func outputGuard(opts Options) atomicfile.Guard {
	g := atomicfile.Guard{Force: opts.Force}
	for _, in := range []string{opts.Dataset, opts.Replay} {
		if in != "" {
			g.Inputs = append(g.Inputs, in)
		}
	}
	return g
}

// checkSidecar refuses a sidecar path that must not be replaced (a link, a device).
func checkSidecar(opts Options) error {
	g := outputGuard(opts)
	g.Force = true
	return g.Check(trace.MetricsPath(opts.Output))
}

// checkWritable fails early, with a clear message, when the trace cannot be written.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s: it is a directory", path)
	}
	f, err := os.CreateTemp(dir, ".ceiling-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// samePlan refuses to resume a different experiment.
func samePlan(old, cur trace.RunInfo) error {
	if old.Plan.RequestTimeoutS == 0 {
		old.Plan.RequestTimeoutS = cur.Plan.RequestTimeoutS // recorded before the limit existed
	}
	a, _ := json.Marshal(old.Plan)
	b, _ := json.Marshal(cur.Plan)
	if string(a) != string(b) {
		return fmt.Errorf("the plan differs from the interrupted run's (was %s, now %s)", a, b)
	}
	if old.Target != cur.Target {
		return fmt.Errorf("the target differs from the interrupted run's (was %+v, now %+v)", old.Target, cur.Target)
	}
	return nil
}

// RequestHeaderID is the X-Request-Id the recorder sends with request id of run runID:
// the run and the trace's request_id, so a row is easy to find in the server's logs.
func RequestHeaderID(runID string, id int64) string {
	return "ceiling-" + runID + "-" + strconv.FormatInt(id, 10)
}

// freshSeed is a seed for a run given none: never 0, which means "none given".
func freshSeed() uint64 {
	for {
		if s := rand.Uint64(); s != 0 {
			return s
		}
	}
}

func newRunID(t time.Time) string {
	return fmt.Sprintf("%s-%08x", t.Format("20060102T150405Z"), rand.Uint32())
}

func (r *recorder) maxConcurrency() int { return r.opts.maxConcurrency() }

// partsAdvice says which option settles a parts directory left by an earlier run.
func partsAdvice(err error) error {
	switch {
	case errors.Is(err, trace.ErrNothingToResume):
		return fmt.Errorf("%w (Options.Force replaces it)", err)
	case errors.Is(err, trace.ErrInterruptedRun):
		return fmt.Errorf("%w: continue it with Options.Resume, or set Options.Force to discard it and start again", err)
	}
	return err
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// progress prints one line to the progress writer. Its arguments may hold the
// server's words (a model id, an error text, a warning quoting either), so the
// whole message goes through safetext.Text: only the line breaks the format asks
// for act on the terminal.
func (r *recorder) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprint(r.opts.Progress, safetext.Text(fmt.Sprintf(format, args...))+"\n")
	}
}

// sealLevel seals the rest of the level's rows with the run info that now lists the
// level as done, so that --resume knows it is complete. The run info lists the level
// only once that part is sealed: a level whose rows could not be written is never
// listed, neither in a later part nor in the trace.
func (r *recorder) sealLevel(li trace.LevelInfo) error {
	rows := r.lastRows
	r.lastRows = nil
	done := r.info
	done.Levels = append(slices.Clip(r.info.Levels), li)
	done.Warnings = r.warningsSoFar()
	if err := r.parts.SealRows(li.Level, rows, done); err != nil {
		return err
	}
	r.info = done
	return r.sealMetrics(li.Level)
}

// sealMetrics seals the metric samples scraped so far.
func (r *recorder) sealMetrics(index int) error {
	samples := r.metrics.take()
	if len(samples) == 0 {
		return nil
	}
	return r.parts.SealMetrics(index, samples, r.info)
}

// finish merges the parts into the trace (and the metrics sidecar) and removes them.
func (r *recorder) finish() error {
	r.info.Warnings = r.warningsSoFar()
	if r.opts.Output == "-" {
		if err := r.parts.MergeTo(r.opts.Stdout, r.info); err != nil {
			return err
		}
	} else if err := r.parts.MergeFiles(r.opts.Output, r.info); err != nil {
		return err
	}
	if !r.tmpParts {
		return r.parts.Remove()
	}
	return nil
}
