package importer

import "testing"

// TestSameRun is the rule that decides whether two files are one sweep: tool,
// model, server and workload (mean lengths within 10%) must agree; what a file
// does not say does not tell files apart.
func TestSameRun(t *testing.T) {
	n := func(v int) *int { return &v }
	run := func(tool, model, url string, prompt, output int) *Run {
		r := &Run{Tool: tool, Model: model, BaseURL: url}
		req := Request{Status: 200}
		if prompt > 0 {
			req.Prompt = n(prompt)
		}
		if output > 0 {
			req.Output = n(output)
		}
		r.Levels = []Level{{Requests: []Request{req, {Err: "boom", Prompt: n(99999)}}}}
		return r
	}
	base := run("vllm", "m", "http://a", 1000, 500)
	for _, c := range []struct {
		name string
		b    *Run
		want bool
	}{
		{"identical", run("vllm", "m", "http://a", 1000, 500), true},
		{"lengths within 10%", run("vllm", "m", "http://a", 1090, 460), true},
		{"no model said", run("vllm", "", "http://a", 1000, 500), true},
		{"no lengths said", run("vllm", "m", "http://a", 0, 0), true},
		{"another tool", run("sglang", "m", "http://a", 1000, 500), false},
		{"another model", run("vllm", "m2", "http://a", 1000, 500), false},
		{"another server", run("vllm", "m", "http://b", 1000, 500), false},
		{"longer prompts", run("vllm", "m", "http://a", 1500, 500), false},
		{"shorter outputs", run("vllm", "m", "http://a", 1000, 256), false},
	} {
		if got := sameRun(base, c.b); got != c.want {
			t.Errorf("%s: sameRun = %v, want %v", c.name, got, c.want)
		}
	}
}
