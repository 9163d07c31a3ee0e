package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The deployment line names the tool an imported run was measured with, and the GPU
// exporters a recording scraped.
func TestDeploymentLineNamesImportAndTelemetry(t *testing.T) {
	r := analyze.Run{Model: "m", Info: json.RawMessage(`{"server": {"kind": "unknown", "gpu_metrics_urls": ["http://a:9400/metrics", "http://b:9400/metrics"]},
		"source": {"tool": "inference-perf", "version": "0.3.0"}}`)}
	line := deploymentLine(&r, readInfo(&r))
	for _, want := range []string{"measured by inference-perf 0.3.0 (imported)", "GPU telemetry from 2 exporters"} {
		if !strings.Contains(line, want) {
			t.Errorf("deployment line %q lacks %q", line, want)
		}
	}
	plain := analyze.Run{Model: "m", Info: json.RawMessage(`{"server": {"kind": "vllm"}}`)}
	if line := deploymentLine(&plain, readInfo(&plain)); strings.Contains(line, "imported") || strings.Contains(line, "telemetry") {
		t.Errorf("a plain recording's line %q names an import or telemetry", line)
	}
}
