package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/record/internal/probe"
	"github.com/ceiling-llm/ceiling/record/internal/workload"
	"github.com/ceiling-llm/ceiling/record/trace"
)

// Options is everything a recording needs; the CLI fills it from flags.
type Options struct {
	URL      string
	Endpoint string // "chat" (default) or "completions"
	Model    string // default: the first model /v1/models lists
	APIKey   string
	// APIKeyEnv names where the key came from, for messages (never the key itself).
	APIKeyEnv string
	Insecure  bool

	Concurrency      []int     // closed-loop levels
	Auto             bool      // --concurrency auto
	Rates            []float64 // open-loop levels (requests/s)
	RequestsPerLevel int
	DurationPerLevel time.Duration
	Warmup           int

	PromptTokens       int
	OutputTokens       int
	Dataset            string
	SharedPrefixTokens int
	IgnoreEOS          bool
	Timeout            time.Duration // per-request stall timeout
	Grace              time.Duration // how long Ctrl-C waits for in-flight requests

	MetricsURL     string // "" = the server's /metrics when it answers; "off" = none
	ScrapeInterval time.Duration

	Output string    // trace path, or "-" for Stdout
	Stdout io.Writer // where "-" writes
	Resume bool
	Seed   uint64

	Declared trace.Declared
	Version  string

	Progress io.Writer // progress lines (stderr); nil = none
	Live     bool      // rewrite one line per level (a terminal)

	// PartRows seals a part every this many rows within a level (default 5000).
	PartRows int
	// MaxAutoConcurrency bounds --concurrency auto when the server reveals no KV
	// capacity (default 1024).
	MaxAutoConcurrency int

	// crashAfterLevels, in tests, makes Record return right after sealing that many
	// levels, without merging: what a kill -9 between levels leaves on disk.
	crashAfterLevels int
}

func (o *Options) defaults() {
	if o.Endpoint == "" {
		o.Endpoint = "chat"
	}
	if o.PromptTokens == 0 && o.Dataset == "" {
		o.PromptTokens = 1024
	}
	if o.OutputTokens == 0 {
		o.OutputTokens = 512
	}
	if o.RequestsPerLevel == 0 && o.DurationPerLevel == 0 {
		o.RequestsPerLevel = 64
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Grace == 0 {
		o.Grace = 30 * time.Second
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	if o.PartRows == 0 {
		o.PartRows = 5000
	}
	if o.MaxAutoConcurrency == 0 {
		o.MaxAutoConcurrency = 1024
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	if o.Auto && len(o.Concurrency) == 0 {
		o.Concurrency = nil
	}
}

// validate checks the options that need no server.
func (o *Options) validate() error {
	switch {
	case o.Output == "":
		return errors.New("no output: give -o FILE (or -o - for stdout)")
	case o.Auto && len(o.Rates) > 0:
		return errors.New("--concurrency auto and --rate exclude each other")
	case len(o.Concurrency) > 0 && len(o.Rates) > 0:
		return errors.New("--concurrency and --rate exclude each other")
	case !o.Auto && len(o.Concurrency) == 0 && len(o.Rates) == 0:
		return errors.New("no sweep: give --concurrency LIST|auto or --rate LIST")
	case o.RequestsPerLevel > 0 && o.DurationPerLevel > 0:
		return errors.New("--requests-per-level and --duration-per-level exclude each other")
	case o.RequestsPerLevel < 0 || o.DurationPerLevel < 0 || o.Warmup < 0:
		return errors.New("--requests-per-level, --duration-per-level and --warmup must not be negative")
	case o.OutputTokens < 1:
		return errors.New("--output-tokens must be positive")
	case o.Dataset == "" && o.PromptTokens < 1:
		return errors.New("--prompt-tokens must be positive")
	case o.SharedPrefixTokens < 0:
		return errors.New("--shared-prefix-tokens must not be negative")
	case o.Endpoint != "chat" && o.Endpoint != "completions":
		return fmt.Errorf("--endpoint %q: want chat or completions", o.Endpoint)
	case o.Resume && o.Output == "-":
		return errors.New("--resume needs an output file, not -o -")
	}
	for _, c := range o.Concurrency {
		if c < 1 {
			return fmt.Errorf("concurrency %d: levels must be at least 1", c)
		}
	}
	for _, r := range o.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("rate %v: rates must be positive requests per second", r)
		}
	}
	return nil
}

func (o *Options) plan() trace.Plan {
	p := trace.Plan{
		Mode:               "closed",
		Concurrency:        o.Concurrency,
		Auto:               o.Auto,
		RequestsPerLevel:   o.RequestsPerLevel,
		DurationPerLevelS:  o.DurationPerLevel.Seconds(),
		Warmup:             o.Warmup,
		PromptTokens:       o.PromptTokens,
		OutputTokens:       o.OutputTokens,
		Dataset:            o.Dataset,
		SharedPrefixTokens: o.SharedPrefixTokens,
		IgnoreEOS:          o.IgnoreEOS,
		TimeoutS:           o.Timeout.Seconds(),
		Seed:               o.Seed,
	}
	if o.Dataset != "" {
		p.PromptTokens = 0
		p.Dataset = filepath.Base(o.Dataset)
	}
	if len(o.Rates) > 0 {
		p.Mode = "open"
		p.Rates = o.Rates
	}
	return p
}

// recorder is the state of one recording.
type recorder struct {
	opts     Options
	client   *client.Client
	workload *workload.Workload
	parts    *trace.Parts
	info     trace.RunInfo
	tmpParts bool // parts in a temporary directory (-o -)

	metricsMu sync.Mutex
	metrics   []trace.MetricSample

	nextID int64
	kvCap  int64 // revealed KV capacity in tokens (0 = unknown)
	// lastRows are the rows of the level just run, not yet sealed.
	lastRows []trace.Row
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
	r := &recorder{opts: opts}
	started := time.Now().UTC()

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
		ps, st, err := trace.ResumeParts(trace.PartsDir(opts.Output))
		if err != nil {
			return trace.RunInfo{}, fmt.Errorf("--resume: %w", err)
		}
		r.parts, resume = ps, &st
	} else {
		if err := checkWritable(opts.Output); err != nil {
			return trace.RunInfo{}, err
		}
		ps, err := trace.CreateParts(trace.PartsDir(opts.Output))
		if err != nil {
			return trace.RunInfo{}, err
		}
		r.parts = ps
	}
	cleanupOnEarlyError := func(err error) (trace.RunInfo, error) {
		if !r.tmpParts && resume == nil {
			r.parts.Remove()
		}
		return trace.RunInfo{}, err
	}

	cl, err := client.New(client.Options{
		BaseURL:   opts.URL,
		Endpoint:  opts.Endpoint,
		APIKey:    opts.APIKey,
		Timeout:   opts.Timeout,
		IgnoreEOS: opts.IgnoreEOS,
		MaxConns:  r.maxConcurrency(),
		Insecure:  opts.Insecure,
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
	if opts.Model == "" {
		if len(pr.Models) == 0 {
			return cleanupOnEarlyError(errors.New("the server lists no model at /v1/models: give --model"))
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
	if pr.Server.KVCapacityTokens != nil {
		r.kvCap = *pr.Server.KVCapacityTokens
	}

	// One request before the sweep: it proves the key and the model, and measures
	// how the server counts prompt tokens.
	r.progress("probing %s (model %s)", cl.BaseURL(), opts.Model)
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
		Target:  trace.Target{BaseURL: cl.BaseURL(), Endpoint: opts.Endpoint, Model: opts.Model},
		Plan:    opts.plan(),
		Server:  pr.Server,
		Client: trace.ClientInfo{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
			GoVersion: runtime.Version(), Hostname: hostname},
		Declared: opts.Declared,
		Levels:   []trace.LevelInfo{},
		Workload: wl.Calibrated,
	}
	if resume != nil {
		if err := samePlan(resume.Info, r.info); err != nil {
			return trace.RunInfo{}, fmt.Errorf("--resume: %w", err)
		}
		r.info.RunID = resume.Info.RunID
		r.info.Started = resume.Info.Started
		r.info.Levels = resume.Info.Levels
		r.info.Resumed = append(resume.Info.Resumed, time.Now().UTC())
		r.nextID = resume.NextID
		r.progress("resuming %s at level %d", opts.Output, resume.NextLevel)
	}

	sweepErr := r.sweep(ctx, resumeLevel(resume))
	if errors.Is(sweepErr, errSimulatedCrash) {
		return r.info, sweepErr
	}
	r.info.Ended = time.Now().UTC()
	if err := r.finish(); err != nil {
		if sweepErr != nil {
			return r.info, fmt.Errorf("%v; and writing the trace failed: %w (the sealed parts are kept in %s)", sweepErr, err, r.parts.Dir())
		}
		return r.info, fmt.Errorf("%w (the sealed parts are kept in %s)", err, r.parts.Dir())
	}
	return r.info, sweepErr
}

func resumeLevel(st *trace.Resumed) int {
	if st == nil {
		return 0
	}
	return st.NextLevel
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

func newRunID(t time.Time) string {
	return fmt.Sprintf("%s-%08x", t.Format("20060102T150405Z"), rand.Uint32())
}

func (r *recorder) maxConcurrency() int {
	m := slices.Max(append([]int{1}, r.opts.Concurrency...))
	if r.opts.Auto {
		m = max(m, 64)
	}
	return m
}

// explain turns pre-flight failures into messages a user can act on.
func (r *recorder) explain(err error) error {
	switch {
	case errors.Is(err, client.ErrUnauthorized):
		if r.opts.APIKey == "" {
			return fmt.Errorf("the server requires an API key: set $%s (%v)", r.opts.APIKeyEnv, err)
		}
		return fmt.Errorf("the server refused the API key from $%s (%v)", r.opts.APIKeyEnv, errors.Unwrap(err))
	}
	return err
}

// probeRequest sends one short streaming request and maps its failure to a clear
// error. It returns the prompt tokens the server reported (or -1).
func (r *recorder) probeRequest(ctx context.Context, text string) (int, error) {
	res := r.client.Do(ctx, client.Prompt{Text: text}, 1)
	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	switch {
	case res.Status == 401 || res.Status == 403:
		return -1, fmt.Errorf("%w (%s)", client.ErrUnauthorized, res.Err)
	case res.Status == 404:
		return -1, fmt.Errorf("%w: %q at %s (%s)", errModelNotFound, r.opts.Model, r.client.Endpoint(), res.Err)
	case res.Status == 0 && res.Err != "":
		return -1, fmt.Errorf("%w at %s: %s", client.ErrUnreachable, r.client.BaseURL(), res.Err)
	case res.Err != "":
		return -1, fmt.Errorf("the probe request failed: %s", res.Err)
	}
	if res.Usage != nil && res.Usage.PromptTokens != nil {
		return int(*res.Usage.PromptTokens), nil
	}
	return -1, nil
}

// prepareWorkload loads the dataset or calibrates synthetic prompts.
func (r *recorder) prepareWorkload(ctx context.Context, pr probe.Probe) (*workload.Workload, error) {
	o := r.opts
	if o.Dataset != "" {
		prompts, err := workload.LoadDataset(o.Dataset)
		if err != nil {
			return nil, err
		}
		if _, err := r.probeRequest(ctx, "Say hello."); err != nil {
			return nil, err
		}
		return workload.NewDataset(prompts, o.OutputTokens), nil
	}
	first := "request 99999999 the first of many words"
	usagePrompt, err := r.probeRequest(ctx, first)
	if err != nil {
		return nil, err
	}
	var measure workload.MeasureFunc
	how := ""
	if n, flavour, err := r.client.Tokenize(ctx, pr.Tokenize, first); err == nil {
		overhead := 0
		if usagePrompt >= 0 {
			// The chat template (and BOS) count too; /tokenize does not see them.
			overhead = usagePrompt - n
		}
		how = "calibrated with /tokenize"
		if overhead != 0 {
			how += fmt.Sprintf(" (+%d template tokens from usage)", overhead)
		}
		measure = func(ctx context.Context, text string) (int, error) {
			n, _, err := r.client.Tokenize(ctx, flavour, text)
			return n + overhead, err
		}
	} else if usagePrompt >= 0 {
		how = "calibrated with usage.prompt_tokens of probe requests"
		measure = func(ctx context.Context, text string) (int, error) {
			n, err := r.probeRequest(ctx, text)
			if err == nil && n < 0 {
				err = errors.New("the server stopped reporting usage")
			}
			return n, err
		}
	} else {
		r.progress("warning: the server has no /tokenize and reports no usage; prompt lengths are estimated, not calibrated")
	}
	return workload.NewSynthetic(ctx, o.Seed, o.PromptTokens, o.SharedPrefixTokens, o.OutputTokens, measure, how)
}

// progress prints one line to the progress writer.
func (r *recorder) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, format+"\n", args...)
	}
}

// level is one step of the sweep.
type level struct {
	index       int
	concurrency int
	rate        float64
}

// levelAt returns the i-th level of a fixed plan (ok false past the end).
func (r *recorder) levelAt(i int) (level, bool) {
	switch {
	case len(r.opts.Rates) > 0:
		if i >= len(r.opts.Rates) {
			return level{}, false
		}
		return level{index: i, rate: r.opts.Rates[i]}, true
	case r.opts.Auto:
		c := 1 << i
		return level{index: i, concurrency: c}, true
	default:
		if i >= len(r.opts.Concurrency) {
			return level{}, false
		}
		return level{index: i, concurrency: r.opts.Concurrency[i]}, true
	}
}

// autoCap is the largest level --concurrency auto may run: twice what the revealed
// KV capacity holds at the workload's length, else MaxAutoConcurrency.
func (r *recorder) autoCap() (int, string) {
	if r.kvCap > 0 {
		per := int64(r.opts.PromptTokens + r.opts.OutputTokens)
		if per <= 0 {
			per = int64(r.opts.OutputTokens) + 1
		}
		holds := max(1, int(r.kvCap/per))
		return 2 * holds, fmt.Sprintf("2× the %d requests the server's KV cache (%d tokens) holds at %d tokens each", holds, r.kvCap, per)
	}
	return r.opts.MaxAutoConcurrency, fmt.Sprintf("the maximum of %d", r.opts.MaxAutoConcurrency)
}

// sweep runs the levels from start, sealing each, until the plan ends, the auto
// rule stops it, the server goes away or ctx is cancelled.
func (r *recorder) sweep(ctx context.Context, start int) error {
	// Metrics are scraped for the whole sweep.
	scrapeCtx, stopScrape := context.WithCancel(context.WithoutCancel(ctx))
	var scrapeWG sync.WaitGroup
	if r.opts.MetricsURL != "" {
		scrapeWG.Add(1)
		go func() {
			defer scrapeWG.Done()
			scrapeMetrics(scrapeCtx, r.client, r.opts.MetricsURL, r.opts.ScrapeInterval, func(s []trace.MetricSample) {
				r.metricsMu.Lock()
				r.metrics = append(r.metrics, s...)
				r.metricsMu.Unlock()
			})
		}()
	}
	defer func() {
		stopScrape()
		scrapeWG.Wait()
		_ = r.sealMetrics(len(r.info.Levels))
	}()

	// In-flight requests outlive ctx by the grace period, then are abandoned.
	hard, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	go func() {
		select {
		case <-ctx.Done():
			r.progress("\ninterrupted: waiting up to %s for the requests in flight (then they are recorded as cancelled)", r.opts.Grace)
			t := time.NewTimer(r.opts.Grace)
			defer t.Stop()
			select {
			case <-t.C:
				abandon()
			case <-hard.Done():
			}
		case <-hard.Done():
		}
	}()

	capLevel, capWhy := r.autoCap()
	var prevTput float64
	var prevConc int
	if start > 0 && len(r.info.Levels) > 0 {
		last := r.info.Levels[len(r.info.Levels)-1]
		prevTput, prevConc = last.OutputTokS, last.Concurrency
	}
	total := len(r.opts.Concurrency) + len(r.opts.Rates)
	for i := start; ; i++ {
		lv, ok := r.levelAt(i)
		if !ok {
			r.info.StopReason = "all levels done"
			return nil
		}
		if r.opts.Auto && lv.concurrency > capLevel {
			r.info.StopReason = fmt.Sprintf("auto: stopped before c=%d, above %s", lv.concurrency, capWhy)
			r.progress("%s", r.info.StopReason)
			return nil
		}
		if ctx.Err() != nil {
			r.info.Interrupted = true
			r.info.StopReason = "interrupted before level " + fmt.Sprint(i)
			return ErrInterrupted
		}
		li, gone, err := r.runLevel(ctx, hard, lv, total)
		r.info.Levels = append(r.info.Levels, li)
		if serr := r.sealLevel(lv.index); serr != nil {
			return serr
		}
		if err != nil {
			return err
		}
		if r.opts.crashAfterLevels > 0 && len(r.info.Levels) >= r.opts.crashAfterLevels {
			return errSimulatedCrash
		}
		if gone != "" {
			r.info.StopReason = "server stopped answering: " + gone
			return fmt.Errorf("%w during level %d: %s", ErrServerGone, lv.index, gone)
		}
		if ctx.Err() != nil {
			r.info.Interrupted = true
			r.info.StopReason = fmt.Sprintf("interrupted during level %d", lv.index)
			return ErrInterrupted
		}
		if r.opts.Auto {
			measured := li.Requests
			if measured > 0 && float64(li.Errors)/float64(measured) > 0.05 {
				r.info.StopReason = fmt.Sprintf("auto: errors above 5%% at c=%d (%d of %d)", lv.concurrency, li.Errors, measured)
				r.progress("%s", r.info.StopReason)
				return nil
			}
			if prevConc > 0 && li.OutputTokS < 1.05*prevTput {
				r.info.StopReason = fmt.Sprintf("auto: throughput rose less than 5%% from c=%d (%.1f tok/s) to c=%d (%.1f tok/s)",
					prevConc, prevTput, lv.concurrency, li.OutputTokS)
				r.progress("%s", r.info.StopReason)
				return nil
			}
			prevTput, prevConc = li.OutputTokS, lv.concurrency
		}
	}
}

// pending holds the rows of the level in flight, sealed every PartRows rows.
type pending struct {
	mu   sync.Mutex
	rows []trace.Row
}

// runLevel runs one level. gone is non-empty when the server stopped answering.
func (r *recorder) runLevel(ctx, hard context.Context, lv level, total int) (trace.LevelInfo, string, error) {
	o := r.opts
	li := trace.LevelInfo{Level: lv.index, Concurrency: lv.concurrency, Rate: lv.rate, Started: time.Now().UTC()}
	cpu0 := cpuTime()
	wall0 := time.Now()

	count := o.Warmup + o.RequestsPerLevel // 0 in duration mode (until the deadline)
	var deadline time.Time
	if o.DurationPerLevel > 0 {
		count = 0
		deadline = wall0.Add(o.DurationPerLevel)
	}
	baseID := r.nextID

	stats := newLevelStats(lv, count, total, o.Progress, o.Live)
	var pend pending
	var sealErr error
	var sealMu sync.Mutex
	add := func(row trace.Row) {
		stats.add(&row)
		pend.mu.Lock()
		pend.rows = append(pend.rows, row)
		var full []trace.Row
		if len(pend.rows) >= o.PartRows {
			full, pend.rows = pend.rows, nil
		}
		pend.mu.Unlock()
		if full != nil {
			sealMu.Lock()
			if err := r.parts.SealRows(lv.index, full, r.info); err != nil && sealErr == nil {
				sealErr = err
			}
			sealMu.Unlock()
		}
	}

	// Consecutive connection failures mean the server is gone: stop the level.
	var connFails atomic.Int64
	var goneMsg atomic.Value
	stopLevel, cancelLevel := context.WithCancel(ctx)
	defer cancelLevel()
	goneAfter := int64(max(8, 2*max(lv.concurrency, 1)))

	var issued atomic.Int64
	// take reserves the next request index, or says the level is done sending.
	take := func() (int64, bool) {
		if stopLevel.Err() != nil {
			return 0, false
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return 0, false
		}
		idx := issued.Add(1) - 1
		if count > 0 && idx >= int64(count) {
			return 0, false
		}
		return idx, true
	}
	do := func(idx int64, worker int32, scheduled int64) {
		id := baseID + idx
		prompt, maxTokens := r.workload.Prompt(id)
		prompt.RequestID = RequestHeaderID(r.info.RunID, id)
		res := r.client.Do(hard, prompt, maxTokens)
		row := trace.Row{
			RunID:              r.info.RunID,
			Level:              int32(lv.index),
			Concurrency:        int32(lv.concurrency),
			Rate:               lv.rate,
			RequestID:          id,
			Worker:             worker,
			Warmup:             idx < int64(o.Warmup),
			TargetPromptTokens: int32(prompt.TargetTokens),
			MaxTokens:          int32(maxTokens),
		}
		fillRow(&row, &res)
		row.ScheduledNs = row.SentNs
		if scheduled != 0 {
			row.ScheduledNs = scheduled
		}
		if res.Conn {
			if connFails.Add(1) >= goneAfter {
				goneMsg.CompareAndSwap(nil, res.Err)
				cancelLevel()
			}
		} else if res.Status != 0 {
			connFails.Store(0)
		}
		add(row)
	}

	var wg sync.WaitGroup
	if lv.rate > 0 {
		// Open loop: Poisson arrivals, each request on its own goroutine.
		rng := rand.New(rand.NewPCG(o.Seed, uint64(lv.index)+1<<32))
		next := wall0
		for {
			next = next.Add(time.Duration(rng.ExpFloat64() / lv.rate * float64(time.Second)))
			if !deadline.IsZero() && !next.Before(deadline) {
				break
			}
			if d := time.Until(next); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-stopLevel.Done():
					t.Stop()
				}
			}
			idx, ok := take()
			if !ok {
				break
			}
			wg.Add(1)
			go func(idx int64, scheduled int64) {
				defer wg.Done()
				do(idx, 0, scheduled)
			}(idx, next.UnixNano())
		}
	} else {
		for w := range lv.concurrency {
			wg.Add(1)
			go func(worker int32) {
				defer wg.Done()
				for {
					idx, ok := take()
					if !ok {
						return
					}
					do(idx, worker, 0)
				}
			}(int32(w))
		}
	}
	wg.Wait()
	stats.finish()

	n := issued.Load()
	if count > 0 {
		n = min(n, int64(count))
	}
	r.nextID = baseID + n

	pend.mu.Lock()
	rest := pend.rows
	pend.rows = nil
	pend.mu.Unlock()
	li.Ended = time.Now().UTC()
	li.Requests, li.Errors = stats.measured, stats.errors
	li.OutputTokS = stats.outputTokS()
	wall := time.Since(wall0).Seconds()
	if wall > 0 {
		li.ClientCPUUtil = (cpuTime() - cpu0).Seconds() / (wall * float64(runtime.NumCPU()))
	}
	if lv.rate > 0 {
		li.SendLagP99S = stats.sendLagP99()
	}
	gone, _ := goneMsg.Load().(string)
	switch {
	case gone != "":
		li.StopReason = "server stopped answering"
	case ctx.Err() != nil:
		li.StopReason = "interrupted"
	}
	// The level's last rows are sealed by the caller together with its LevelInfo.
	r.lastRows = rest
	if sealErr != nil {
		return li, gone, sealErr
	}
	return li, gone, nil
}

// sealLevel seals the rest of the level's rows with the run info that now lists the
// level as done, so that --resume knows it is complete.
func (r *recorder) sealLevel(index int) error {
	rows := r.lastRows
	r.lastRows = nil
	if err := r.parts.SealRows(index, rows, r.info); err != nil {
		return err
	}
	return r.sealMetrics(index)
}

// sealMetrics seals the metric samples scraped so far.
func (r *recorder) sealMetrics(index int) error {
	r.metricsMu.Lock()
	samples := r.metrics
	r.metrics = nil
	r.metricsMu.Unlock()
	if len(samples) == 0 {
		return nil
	}
	return r.parts.SealMetrics(index, samples, r.info)
}

// finish merges the parts into the trace (and the metrics sidecar) and removes them.
func (r *recorder) finish() error {
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

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// levelStats follows a level for the progress line and its LevelInfo.
type levelStats struct {
	mu        sync.Mutex
	lv        level
	count     int // requests planned (0 = until the deadline)
	total     int // levels planned (0 = auto)
	w         io.Writer
	live      bool
	done      int
	measured  int // non-warm-up requests
	errors    int // non-warm-up failures
	outTokens int64
	firstSent int64
	lastEnd   int64
	ttfts     []float64
	lags      []float64
	stop      chan struct{}
	stopped   chan struct{}
}

func newLevelStats(lv level, count, total int, w io.Writer, live bool) *levelStats {
	s := &levelStats{lv: lv, count: count, total: total, w: w, live: live}
	if w != nil {
		// A terminal gets a line rewritten in place; a log gets a plain line now and
		// then, so that a long level still shows it is alive.
		every, format := 10*time.Second, "%s\n"
		if live {
			every, format = 250*time.Millisecond, "\r%s\x1b[K"
		}
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(s.stopped)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-s.stop:
					return
				case <-t.C:
					s.mu.Lock()
					line := s.lineLocked()
					s.mu.Unlock()
					fmt.Fprintf(w, format, line)
				}
			}
		}()
	}
	return s
}

func (s *levelStats) add(row *trace.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done++
	if row.Warmup {
		return
	}
	s.measured++
	if row.Error != nil {
		s.errors++
		return
	}
	if row.OutputTokens != nil {
		s.outTokens += int64(*row.OutputTokens)
	}
	if s.firstSent == 0 || row.SentNs < s.firstSent {
		s.firstSent = row.SentNs
	}
	s.lastEnd = max(s.lastEnd, row.EndNs)
	if row.FirstTokenNs != nil {
		s.ttfts = append(s.ttfts, float64(*row.FirstTokenNs-row.SentNs)/1e9)
	}
	s.lags = append(s.lags, float64(row.SentNs-row.ScheduledNs)/1e9)
}

// outputTokS is the naive output throughput of the level's measured requests.
func (s *levelStats) outputTokS() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastEnd <= s.firstSent {
		return 0
	}
	return float64(s.outTokens) / (float64(s.lastEnd-s.firstSent) / 1e9)
}

func (s *levelStats) sendLagP99() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return quantile(s.lags, 0.99)
}

// lineLocked renders the progress line, e.g.
// "level 3/6  c=8  64/64 req  812.5 tok/s  p50 TTFT 0.21s  0 errors".
func (s *levelStats) lineLocked() string {
	var b strings.Builder
	if s.total > 0 {
		fmt.Fprintf(&b, "level %d/%d", s.lv.index+1, s.total)
	} else {
		fmt.Fprintf(&b, "level %d", s.lv.index+1)
	}
	if s.lv.rate > 0 {
		fmt.Fprintf(&b, "  rate=%g/s", s.lv.rate)
	} else {
		fmt.Fprintf(&b, "  c=%d", s.lv.concurrency)
	}
	if s.count > 0 {
		fmt.Fprintf(&b, "  %d/%d req", s.done, s.count)
	} else {
		fmt.Fprintf(&b, "  %d req", s.done)
	}
	tput := 0.0
	if s.lastEnd > s.firstSent {
		tput = float64(s.outTokens) / (float64(s.lastEnd-s.firstSent) / 1e9)
	}
	fmt.Fprintf(&b, "  %.1f tok/s", tput)
	if len(s.ttfts) > 0 {
		fmt.Fprintf(&b, "  p50 TTFT %.2fs", quantile(s.ttfts, 0.5))
	} else {
		b.WriteString("  p50 TTFT -")
	}
	fmt.Fprintf(&b, "  %d errors", s.errors)
	return b.String()
}

func (s *levelStats) finish() {
	if s.w == nil {
		return
	}
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
	}
	s.mu.Lock()
	line := s.lineLocked()
	s.mu.Unlock()
	if s.live {
		fmt.Fprintf(s.w, "\r%s\x1b[K\n", line)
	} else {
		fmt.Fprintln(s.w, line)
	}
}

// quantile interpolates linearly between order statistics (numpy's default).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// Validate checks the options that need no server (the CLI's usage errors).
func (o Options) Validate() error {
	o.defaults()
	return o.validate()
}
