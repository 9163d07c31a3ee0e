package analyze

import (
	"math"
	"testing"
)

// codahale/usl's model_test.go: σ = 0.02671591, κ = 7.690945e-4, λ = 995.6486 give
// X(20) = 11063.63312570436 and MaxConcurrency ⌊Nmax⌋ = 35.
func TestUSLModel(t *testing.T) {
	m := usl{Sigma: 0.02671591, Kappa: 7.690945e-4, Lambda: 995.6486}
	if got := m.Throughput(20); !relClose(got, 11063.63312570436, 1e-6) {
		t.Errorf("X(20) = %v", got)
	}
	if got := m.Throughput(1); got != m.Lambda {
		t.Errorf("X(1) = %v, want λ", got)
	}
	n, ok := m.Nmax()
	if !ok || math.Floor(n) != 35 {
		t.Errorf("Nmax = %v, %v; want ⌊Nmax⌋ = 35", n, ok)
	}
	// At Nmax the curve peaks: both neighbours lie below it.
	if x := m.Throughput(n); m.Throughput(n-1) >= x || m.Throughput(n+1) >= x {
		t.Errorf("X(Nmax) = %v is not a peak", x)
	}
	for _, tt := range []struct {
		name string
		m    usl
	}{
		{"κ = 0 rises for ever", usl{Sigma: 0.1, Lambda: 1}},
		{"σ = 1 never rises", usl{Sigma: 1, Kappa: 0.01, Lambda: 1}},
	} {
		if n, ok := tt.m.Nmax(); ok {
			t.Errorf("%s: Nmax %v", tt.name, n)
		}
	}
	// The fitted curve is the same law.
	f := USLFit{Sigma: m.Sigma, Kappa: m.Kappa, Lambda: m.Lambda}
	if f.Throughput(7) != m.Throughput(7) {
		t.Errorf("USLFit.Throughput(7) = %v, usl %v", f.Throughput(7), m.Throughput(7))
	}
}
