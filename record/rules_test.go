package record

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

func TestLevelAt(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []level // the plan's levels, in order, until ok is false
		open bool    // the plan never ends (auto): check only len(want) levels
	}{
		{"closed", Options{Concurrency: []int{1, 4, 16}}, []level{
			{index: 0, point: 0, concurrency: 1}, {index: 1, point: 1, concurrency: 4}, {index: 2, point: 2, concurrency: 16}}, false},
		{"open", Options{Rates: []float64{0.5, 2}}, []level{{index: 0, rate: 0.5}, {index: 1, point: 1, rate: 2}}, false},
		{"auto doubles", Options{Auto: true}, []level{
			{index: 0, concurrency: 1}, {index: 1, point: 1, concurrency: 2}, {index: 2, point: 2, concurrency: 4},
			{index: 3, point: 3, concurrency: 8}, {index: 10, point: 10, concurrency: 1024}}, true},
		{"replay speeds", Options{Replay: "t.jsonl", ReplaySpeeds: []float64{1, 4}}, []level{{index: 0, speed: 1}, {index: 1, point: 1, speed: 4}}, false},
		// --repeat 2: each point twice in a row, every level its own index.
		{"closed repeated", Options{Concurrency: []int{1, 4}, Repeat: 2}, []level{
			{index: 0, point: 0, repeat: 0, repeats: 2, concurrency: 1}, {index: 1, point: 0, repeat: 1, repeats: 2, concurrency: 1},
			{index: 2, point: 1, repeat: 0, repeats: 2, concurrency: 4}, {index: 3, point: 1, repeat: 1, repeats: 2, concurrency: 4}}, false},
		{"open repeated", Options{Rates: []float64{2}, Repeat: 3}, []level{
			{index: 0, repeats: 3, rate: 2}, {index: 1, repeat: 1, repeats: 3, rate: 2}, {index: 2, repeat: 2, repeats: 3, rate: 2}}, false},
		{"auto repeated", Options{Auto: true, Repeat: 2}, []level{
			{index: 0, repeats: 2, concurrency: 1}, {index: 1, repeat: 1, repeats: 2, concurrency: 1},
			{index: 2, point: 1, repeats: 2, concurrency: 2}, {index: 5, point: 2, repeat: 1, repeats: 2, concurrency: 4}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				got, ok := levelAt(&tt.opts, w.index)
				if !ok || got != w {
					t.Errorf("levelAt(%d) = %+v, %v; want %+v, true", w.index, got, ok, w)
				}
			}
			if !tt.open {
				if got, ok := levelAt(&tt.opts, len(tt.want)); ok {
					t.Errorf("levelAt(%d) past the plan = %+v, true; want false", len(tt.want), got)
				}
			}
		})
	}
}

func TestAutoCap(t *testing.T) {
	tests := []struct {
		name                  string
		kv                    int64
		prompt, output, limit int
		want                  int
		why                   string
	}{
		// 100,000 tokens hold 65 requests of 1,536 tokens: stop above 130.
		{"from KV", 100000, 1024, 512, 1024, 130, "65 requests"},
		{"KV smaller than one request", 1000, 1024, 512, 1024, 2, "1 requests"},
		{"dataset (no prompt length)", 5000, 0, 99, 1024, 100, "50 requests"},
		{"unknown KV", 0, 1024, 512, 256, 256, "maximum of 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := autoCap(tt.kv, tt.prompt, tt.output, tt.limit)
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("autoCap = %d (%s), want %d (…%s…)", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestAutoStop(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur levelResult
		stop      bool
		why       string
	}{
		{"first level goes on", levelResult{}, levelResult{1, 10, 0, 50}, false, ""},
		{"first level with errors stops", levelResult{}, levelResult{1, 10, 1, 50}, true, "errors above 5% at c=1 (1 of 10)"},
		{"5% errors is not above 5%", levelResult{1, 20, 0, 50}, levelResult{2, 20, 1, 100}, false, ""},
		{"throughput rises", levelResult{1, 10, 0, 50}, levelResult{2, 10, 0, 90}, false, ""},
		{"throughput rises by 5% exactly", levelResult{2, 10, 0, 100}, levelResult{4, 10, 0, 105}, false, ""},
		{"throughput flat", levelResult{4, 10, 0, 100}, levelResult{8, 10, 0, 104}, true, "from c=4 (100.0 tok/s) to c=8 (104.0 tok/s)"},
		{"throughput falls", levelResult{4, 10, 0, 100}, levelResult{8, 10, 0, 60}, true, "rose less than 5%"},
		{"no measured requests", levelResult{}, levelResult{1, 0, 0, 0}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why, stop := autoStop(tt.prev, tt.cur)
			if stop != tt.stop || !strings.Contains(why, tt.why) || (!stop && why != "") {
				t.Errorf("autoStop = %q, %v; want %v (…%s…)", why, stop, tt.stop, tt.why)
			}
		})
	}
}

func TestPointResult(t *testing.T) {
	levels := []trace.LevelInfo{
		{Level: 0, Concurrency: 1, Requests: 8, Errors: 0, OutputTokS: 100},
		{Level: 1, Concurrency: 1, Requests: 8, Errors: 1, OutputTokS: 140},
		{Level: 2, Concurrency: 2, Requests: 8, Errors: 2, OutputTokS: 190},
	}
	tests := []struct {
		c    int
		want levelResult
	}{
		{1, levelResult{concurrency: 1, requests: 16, errors: 1, outputTokS: 120}},
		{2, levelResult{concurrency: 2, requests: 8, errors: 2, outputTokS: 190}},
		{4, levelResult{concurrency: 4}},
	}
	for _, tt := range tests {
		if got := pointResult(levels, tt.c); got != tt.want {
			t.Errorf("pointResult(c=%d) = %+v, want %+v", tt.c, got, tt.want)
		}
	}
	// c=2 errs on 2 of 8: the pooled point stops the auto rule.
	if _, stop := autoStop(pointResult(levels, 1), pointResult(levels, 2)); !stop {
		t.Errorf("auto went on past 25%% errors")
	}
}
