package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseLengths(t *testing.T) {
	tests := []struct {
		in      string
		want    Lengths
		wantErr string
	}{
		{"2000", Lengths{Kind: "fixed", A: 2000}, ""},
		{"uniform:500-4000", Lengths{Kind: "uniform", A: 500, B: 4000}, ""},
		{"normal:2000,400", Lengths{Kind: "normal", A: 2000, B: 400}, ""},
		{"lognormal:2000,0.6", Lengths{Kind: "lognormal", A: 2000, B: 0.6}, ""},
		{"dataset", Lengths{Kind: "dataset"}, ""},
		{"0", Lengths{}, "positive whole number"},
		{"abc", Lengths{}, "want a positive whole number of tokens or N, uniform:MIN-MAX"},
		{"uniform:4000-500", Lengths{}, "MIN <= MAX"},
		{"uniform:500,4000", Lengths{}, `separated by "-"`},
		{"normal:2000", Lengths{}, `separated by ","`},
		{"normal:2000,-1", Lengths{}, "SD >= 0"},
		{"lognormal:x,0.6", Lengths{}, `"x" is not a number`},
		{"gamma:2,3", Lengths{}, `unknown distribution "gamma"`},
	}
	for _, tt := range tests {
		got, err := ParseLengths(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseLengths(%q) error %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseLengths(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if back, err := ParseLengths(got.String()); err != nil || back != got {
			t.Errorf("%q does not read back: %+v, %v", got.String(), back, err)
		}
	}
}

// ksDistance is the Kolmogorov–Smirnov statistic of samples against cdf; draws are
// whole tokens, so the empirical CDF is compared at x+0.5 (the continuous values a
// draw of x stands for).
func ksDistance(samples []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		hi := cdf(s[i] + 0.5)
		lo := cdf(s[i] - 0.5)
		d = math.Max(d, math.Max(math.Abs(float64(j)/n-hi), math.Abs(float64(i)/n-lo)))
		i = j
	}
	return d
}

// ksCritical is the 1% critical value of the one-sample KS test for n samples.
func ksCritical(n int) float64 { return 1.63 / math.Sqrt(float64(n)) }

// TestDrawsFitTheirDistribution checks each distribution's draws with a
// Kolmogorov–Smirnov test against its CDF, and that the test can tell a wrong
// distribution (the draws of one against the CDF of another).
func TestDrawsFitTheirDistribution(t *testing.T) {
	const n = 3000
	dists := []string{"uniform:500-4000", "normal:2000,400", "normal:100,80", "lognormal:2000,0.6", "lognormal:300,1.2"}
	for _, spec := range dists {
		l, err := ParseLengths(spec)
		if err != nil {
			t.Fatal(err)
		}
		var xs []float64
		for i := range n {
			x := l.Draw(lengthRNG(42, int64(i), 1))
			if x < 1 {
				t.Fatalf("%s drew %d, below 1", spec, x)
			}
			xs = append(xs, float64(x))
		}
		if d := ksDistance(xs, l.CDF); d > ksCritical(n) {
			t.Errorf("%s: KS distance %.4f above the 1%% critical value %.4f", spec, d, ksCritical(n))
		}
		// The same draws against a distribution 25% off must fail.
		off := l
		off.A *= 1.25
		if d := ksDistance(xs, off.CDF); d <= ksCritical(n) {
			t.Errorf("%s: KS distance %.4f against %s, the test cannot tell them apart", spec, d, off)
		}
		for _, q := range []float64{0.01, 0.5, 0.99} {
			if got := l.CDF(l.Quantile(q)); math.Abs(got-q) > 1e-6 {
				t.Errorf("%s: CDF(Quantile(%v)) = %v", spec, q, got)
			}
		}
	}
}

func TestFixedDraws(t *testing.T) {
	l, _ := ParseLengths("2000")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		if x := l.Draw(rng); x != 2000 {
			t.Fatalf("fixed drew %d", x)
		}
	}
}
