package record

import "testing"

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
		{"replay speeds", Options{Replay: "t.jsonl", ReplaySpeeds: []float64{1, 4}}, []level{{index: 0, speed: 1}, {index: 1, point: 1, speed: 4}}, false},
		// --repeat 2: each point twice in a row, every level its own index.
		{"closed repeated", Options{Concurrency: []int{1, 4}, Repeat: 2}, []level{
			{index: 0, point: 0, repeat: 0, repeats: 2, concurrency: 1}, {index: 1, point: 0, repeat: 1, repeats: 2, concurrency: 1},
			{index: 2, point: 1, repeat: 0, repeats: 2, concurrency: 4}, {index: 3, point: 1, repeat: 1, repeats: 2, concurrency: 4}}, false},
		{"open repeated", Options{Rates: []float64{2}, Repeat: 3}, []level{
			{index: 0, repeats: 3, rate: 2}, {index: 1, repeat: 1, repeats: 3, rate: 2}, {index: 2, repeat: 2, repeats: 3, rate: 2}}, false},
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
