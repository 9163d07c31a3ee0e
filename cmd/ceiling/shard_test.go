package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8syaml "sigs.k8s.io/yaml"
)

// startShard starts `ceiling record` as shard index of count, the way a pod of a
// Kubernetes Indexed Job does: the shard comes from JOB_COMPLETION_INDEX and
// CEILING_SHARD_COUNT, not from a flag.
func startShard(t *testing.T, index, count int, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	child := exec.Command(os.Args[0], append([]string{"record"}, args...)...)
	child.Env = append(os.Environ(), "CEILING_TEST_MAIN=1",
		fmt.Sprintf("JOB_COMPLETION_INDEX=%d", index), fmt.Sprintf("CEILING_SHARD_COUNT=%d", count))
	stderr := &syncBuffer{}
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill() })
	return child, stderr
}

// shardedSweep runs count shard processes of one scheduled sweep against url,
// the shard late (if any) started lateBy after the others, and merges them.
func shardedSweep(t *testing.T, url string, count, late int, lateBy time.Duration, sweep ...string) (merged string, mergeErr string) {
	t.Helper()
	dir := t.TempDir()
	start := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	args := append([]string{"--url", url, "--start-at", start.Format(time.RFC3339), "--schedule-gap", "1s",
		"-o", filepath.Join(dir, "run-{shard}.parquet")}, sweep...)
	type proc struct {
		cmd    *exec.Cmd
		stderr *syncBuffer
	}
	var ps []proc
	for i := range count {
		if i == late {
			time.Sleep(time.Until(start.Add(lateBy)))
		}
		cmd, stderr := startShard(t, i, count, args...)
		ps = append(ps, proc{cmd, stderr})
	}
	var files []string
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, p.stderr.String())
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("run-%d.parquet", i)))
	}
	merged = filepath.Join(dir, "merged.parquet")
	code, _, stderr := runCLI(append(append([]string{"merge"}, files...), "-o", merged)...)
	if code != 0 {
		t.Fatalf("merge exited %d: %s", code, stderr)
	}
	return merged, stderr
}

func analyzeJSON(t *testing.T, path string) analyze.Run {
	t.Helper()
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, "analyze", path, "--format", "json")), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(a.Runs))
	}
	return a.Runs[0]
}

// TestShardedSweepEqualsOneClient runs one sweep as three shard processes and as
// one client, against the test engine (whose service time is fixed), and checks
// that the merged run is the same experiment: every level reached its whole
// concurrency, its throughput within 5% of the single client's, its TTFT and TPOT
// medians within the single client's bootstrap intervals (or 5%).
func TestShardedSweepEqualsOneClient(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 100 * time.Millisecond, TokenGap: 20 * time.Millisecond, Slots: 64})
	defer eng.Close()
	// Both sweeps are timed by the machine's scheduler: on a loaded machine one of
	// them can be starved for a while. A pair that disagrees is recorded once more;
	// the test fails when the second pair disagrees too.
	var problems []string
	for attempt := 1; attempt <= 2; attempt++ {
		if problems = shardedVersusOne(t, eng.URL()); len(problems) == 0 {
			return
		}
		t.Logf("attempt %d: %s", attempt, strings.Join(problems, "; "))
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// shardedVersusOne records the sweep as three shards and as one client and says
// where the merged run is not the same experiment.
func shardedVersusOne(t *testing.T, url string) []string {
	t.Helper()
	sweep := []string{"--concurrency", "3,8", "--duration-per-level", "4s",
		"--prompt-tokens", "20", "--output-tokens", "20", "--metrics-url", "off", "--seed", "5"}
	merged, _ := shardedSweep(t, url, 3, -1, 0, sweep...)

	// The single client runs in its own process too, as each shard does: in the
	// test's process it would share the engine's cores and scheduler.
	single := filepath.Join(t.TempDir(), "single.parquet")
	one := exec.Command(os.Args[0], append([]string{"record", "--url", url, "-o", single}, sweep...)...)
	one.Env = append(os.Environ(), "CEILING_TEST_MAIN=1")
	if out, err := one.CombinedOutput(); err != nil {
		t.Fatalf("single client: %v\n%s", err, out)
	}

	info, rows, err := trace.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if info.Shard == nil || len(info.Shard.Merged) != 3 {
		t.Fatalf("merged run's shard info %+v", info.Shard)
	}
	prompts := map[int64]bool{}
	for _, r := range rows {
		if prompts[r.RequestID] {
			t.Fatalf("request id %d sent by two shards", r.RequestID)
		}
		prompts[r.RequestID] = true
	}
	m, s := analyzeJSON(t, merged), analyzeJSON(t, single)
	if len(m.Levels) != 2 || len(s.Levels) != 2 {
		t.Fatalf("levels: merged %d, single %d", len(m.Levels), len(s.Levels))
	}
	var problems []string
	for i := range m.Levels {
		ml, sl := m.Levels[i], s.Levels[i]
		if !ml.Valid {
			problems = append(problems, fmt.Sprintf("merged c=%d invalid: %s", ml.Concurrency, ml.InvalidReason))
		}
		if d := math.Abs(ml.OutputTokS-sl.OutputTokS) / sl.OutputTokS; d > 0.05 {
			problems = append(problems, fmt.Sprintf("c=%d: merged %.1f tok/s, one client %.1f (%.1f%% apart, want within 5%%)", ml.Concurrency, ml.OutputTokS, sl.OutputTokS, 100*d))
		}
		for _, q := range []struct {
			name string
			m, s analyze.Summary
		}{{"TTFT", ml.TTFT, sl.TTFT}, {"TPOT", ml.TPOT, sl.TPOT}} {
			got, want := deref(q.m.P50), deref(q.s.P50)
			if math.Abs(got-want) > 0.05*want+0.002 {
				problems = append(problems, fmt.Sprintf("c=%d: %s p50 merged %.4f s, one client %.4f s", ml.Concurrency, q.name, got, want))
			}
		}
	}
	return problems
}

// TestShardedSweepNamesLateShard starts one of three shards after its first
// level's window opened: the merge names it.
func TestShardedSweepNamesLateShard(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 100 * time.Millisecond, TokenGap: 20 * time.Millisecond, Slots: 64})
	defer eng.Close()
	merged, stderr := shardedSweep(t, eng.URL(), 3, 2, 2*time.Second, "--concurrency", "6", "--duration-per-level", "4s",
		"--prompt-tokens", "20", "--output-tokens", "20", "--metrics-url", "off")
	if !strings.Contains(stderr, "level 0: shard 2 started") {
		t.Errorf("the late shard 2 is not named:\n%s", stderr)
	}
	// The merged trace carries the finding to the analysis of it.
	if w := strings.Join(analyzeJSON(t, merged).Warnings, "\n"); !strings.Contains(w, "merge: level 0: shard 2 started") {
		t.Errorf("the analysis of the merged trace does not name the late shard:\n%s", w)
	}
}

func TestMergeCLIRefuses(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	defer eng.Close()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.parquet")
	ceiling(t, "record", "--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "4",
		"--prompt-tokens", "10", "--output-tokens", "5", "--metrics-url", "off", "-o", plain)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"merge", plain, "-o", filepath.Join(dir, "m.parquet")}, exitFailed, "not a shard's trace"},
		{[]string{"merge", plain, "-o", plain}, exitUsage, "is one of the inputs"},
		{[]string{"merge", plain}, exitUsage, "-o must name"},
		{[]string{"merge", "-o", "x.parquet"}, exitUsage, "no shard trace given"},
		{[]string{"merge", filepath.Join(dir, "missing.parquet"), "-o", filepath.Join(dir, "m.parquet")}, exitFailed, "missing.parquet"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

func TestRecordShardFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "3/3", "--concurrency", "3", "--duration-per-level", "2s", "--run-id", "r"}, "runs from 0 to 2"},
		{[]string{"--shard", "0/3", "--concurrency", "3", "--run-id", "r"}, "needs --duration-per-level"},
		{[]string{"--shard", "0/3", "--concurrency", "3", "--duration-per-level", "2s"}, "needs --run-id or --start-at"},
		{[]string{"--shard", "0/3", "--concurrency", "auto", "--duration-per-level", "2s", "--run-id", "r"}, "cannot be sharded"},
		{[]string{"--concurrency", "3", "--duration-per-level", "2s", "--start-at", "tomorrow"}, "RFC 3339"},
		{[]string{"--concurrency", "3", "--schedule-gap", "2s"}, "--schedule-gap needs --start-at"},
	} {
		args := append([]string{"record", "--url", "http://127.0.0.1:1", "-o", filepath.Join(t.TempDir(), "x.parquet")}, c.args...)
		code, _, stderr := runCLI(args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want a usage error saying %q", c.args, code, stderr, c.want)
		}
	}
}

// TestKubernetesJobRuns runs the deploy/kubernetes manifests' own commands: the
// sweep Job's container args (with the ConfigMap's sweep file) as three shard
// pods would, each with the environment Kubernetes gives it, against the test
// engine instead of the cluster's server and with short levels; then the merge
// Job's args. It proves the manifests name flags, config keys and a file layout
// that ceiling accepts.
func TestKubernetesJobRuns(t *testing.T) {
	job := decodeManifest[batchv1.Job](t, "job.yaml")
	mergeJob := decodeManifest[batchv1.Job](t, "merge-job.yaml")
	cm := decodeManifest[corev1.ConfigMap](t, "configmap.yaml")
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 2 * time.Millisecond})
	defer eng.Close()

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "sweep.yaml"), []byte(cm.Data["sweep.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	count := int(*job.Spec.Completions)
	start := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	vars := map[string]string{"JOB_NAME": job.Name, "START_AT": start.Format(time.RFC3339)}
	paths := strings.NewReplacer("/etc/ceiling/", filepath.Join(dir, "etc")+"/", "/traces/", dir+"/")
	var procs []*exec.Cmd
	var outs []*syncBuffer
	for i := range count {
		vars["JOB_COMPLETION_INDEX"] = fmt.Sprint(i)
		var args []string
		for _, a := range c.Args[1:] { // c.Args[0] is the subcommand
			args = append(args, paths.Replace(os.Expand(strings.NewReplacer("$(", "${", ")", "}").Replace(a), func(k string) string { return vars[k] })))
		}
		// The cluster's server and long levels, replaced for the test.
		args = append(args, "--url", eng.URL(), "--concurrency", "3", "--duration-per-level", "2s", "--schedule-gap", "1s",
			"--prompt-tokens", "10", "--output-tokens", "5", "--metrics-url", "off")
		cmd, stderr := startShard(t, i, count, args...)
		procs, outs = append(procs, cmd), append(outs, stderr)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i].String())
		}
	}
	var margs []string
	for _, a := range mergeJob.Spec.Template.Spec.Containers[0].Args {
		margs = append(margs, paths.Replace(a))
	}
	code, _, stderr := runCLI(margs...)
	if code != 0 {
		t.Fatalf("the merge Job's command %v exited %d: %s", margs, code, stderr)
	}
	info, _, err := trace.ReadFile(filepath.Join(dir, job.Name+".parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if info.RunID != job.Name || info.Shard == nil || len(info.Shard.Merged) != count {
		t.Errorf("merged run %s with shards %+v; want run %s of %d shards", info.RunID, info.Shard, job.Name, count)
	}
}

func decodeManifest[T any](t *testing.T, name string) *T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := k8syaml.UnmarshalStrict(data, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &v
}
