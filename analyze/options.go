package analyze

import "github.com/ceiling-llm/ceiling/capacity"

// Options configure an analysis. The zero value analyzes without SLOs and without a
// hardware model (the capacity then comes only from what the server revealed).
type Options struct {
	SLO SLO
	// IgnoreCorrupt leaves out the corrupt parts of a RUN.parts directory (a
	// warning names each) instead of refusing the trace.
	IgnoreCorrupt bool
	// ModelConfig is the path of a Hugging Face config.json ("" = none).
	ModelConfig string
	// BudgetInput is the hardware side of the capacity model; it is used when GPU or
	// MemoryGiB is set (with ModelConfig), and GPUs and TP count the replicas either way.
	capacity.BudgetInput
	// MaxModelLen overrides the context length used for "concurrency at max_model_len"
	// when the server did not reveal it (0 = the config's max_position_embeddings).
	MaxModelLen int64
	// Decision holds the cost and load inputs of the decision section.
	Decision DecisionOptions
	// TimelineLevel picks the level drawn on the per-request timeline (-1 = the level
	// nearest the realistic ceiling).
	TimelineLevel int
	// Deployment is the declared deployment (config, shape, budget, KV model,
	// roofline) computed once from ModelConfig and BudgetInput; nil = computed by
	// Prepare (AnalyzeSources does it), so every run and any what-if share one.
	Deployment *capacity.Deployment
	// Resamples is the number of bootstrap resamples behind the confidence intervals
	// and the ceiling's stability (0 = 1000; negative = no bootstrap).
	Resamples int
	// Knee is the gain per doubling below which the throughput curve counts as
	// flat (0: the run's own criterion where its recording stored one, else
	// defaultPlateauGain; negative: no knee ceiling).
	Knee float64
	// MaxErrors is the share of failed requests above which a level is past the
	// ceiling (0: the run's own search criterion where its recording stored one,
	// else defaultMaxErrors; negative: no errors ceiling).
	MaxErrors float64
	// Percentiles are tail percentiles (0 < p < 100) to report beside p99.9 for
	// every latency, each with its sample-size guard (stats_tail.go).
	Percentiles []float64
	// spillChunk is the spill directory's chunk (spill.go): 0 = spillChunk, negative =
	// keep every value in memory. Tests set it to compare the two.
	spillChunk int
	// sidecarSamples bounds the samples kept from one metrics file: 0 =
	// maxSidecarSamples (load_metricsbound.go); smaller in tests.
	sidecarSamples int
}

// Prepare computes the declared deployment once (Deployment), unless it is there
// already: config.json is then parsed once for the whole analysis.
func (o *Options) Prepare() error {
	if o.Deployment != nil {
		return nil
	}
	d, err := capacity.NewDeployment(o.ModelConfig, o.BudgetInput)
	if err != nil {
		return err
	}
	o.Deployment = d
	return nil
}

// kneeGain is the knee threshold the analysis applies; ok is false when the knee is
// off.
func (o Options) kneeGain() (gain float64, ok bool) {
	switch {
	case o.Knee < 0:
		return 0, false
	case o.Knee > 0:
		return o.Knee, true
	}
	return defaultPlateauGain, true
}
