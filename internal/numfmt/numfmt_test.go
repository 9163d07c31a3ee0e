package numfmt

import (
	"math"
	"testing"
)

func TestThousands(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0", "0"}, {"999", "999"}, {"1000", "1,000"}, {"-1234567", "-1,234,567"},
		{"1234.5678", "1,234.5678"}, {"-100.5", "-100.5"}, {"123456", "123,456"},
	} {
		if got := Thousands(tt.in); got != tt.want {
			t.Errorf("Thousands(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Int(math.MinInt64); got != "-9,223,372,036,854,775,808" {
		t.Errorf("Int(MinInt64) = %q", got)
	}
	if got := Int(351424); got != "351,424" {
		t.Errorf("Int(351424) = %q", got)
	}
}

func TestCells(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct{ got, want string }{
		{Fixed(1.25, 1), "1.2"}, {Fixed(math.NaN(), 1), "—"}, {Fixed(math.Inf(1), 0), "—"},
		{FixedOrNone(nil, 2), "—"}, {FixedOrNone(f(3), 2), "3.00"},
		{Concurrency(f(32)), "32"}, {Concurrency(f(23.46)), "23.5"}, {Concurrency(nil), "—"},
		{Seconds(f(0)), "0"}, {Seconds(f(0.00085)), "850µs"}, {Seconds(f(0.0123)), "12.3ms"}, {Seconds(f(1.5)), "1.50s"},
		{Seconds(f(150)), "150s"}, {Seconds(nil), "—"}, {Seconds(f(math.NaN())), "—"},
		{Short(-12.34), "-12.3"}, {Short(0.5), "0.50"},
		{Percent(f(0.254)), "25%"}, {Percent(nil), "—"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
