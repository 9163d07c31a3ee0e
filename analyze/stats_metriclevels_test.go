package analyze

import (
	"reflect"
	"testing"
)

func TestMetricLevels(t *testing.T) {
	const start = int64(1_000_000_000_000)
	sec := func(s float64) int64 { return start + int64(s*1e9) }
	// A sawtooth gauge scraped each second: 0, 4, 0, 4 ... for level 0 (window 1–4 s),
	// a steady 3 for level 1 (window 6–8 s), and a level too short for a scrape.
	series := [][2]float64{{0, 0}, {1, 4}, {2, 0}, {3, 4}, {4, 0}, {5, 9}, {6, 3}, {7, 3}, {8, 3}, {9, 9}}
	windows := []levelWindow{{0, sec(1), sec(4)}, {1, sec(6), sec(8)}, {2, sec(8.2), sec(8.6)}}
	got := metricLevels(series, windows, start)
	want := []MetricLevel{{Level: 0, N: 4, Mean: 2, Max: 4}, {Level: 1, N: 3, Mean: 3, Max: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metricLevels = %+v, want %+v", got, want)
	}
	if got := metricLevels(series, nil, start); got != nil {
		t.Errorf("no windows: %+v, want none", got)
	}
}
