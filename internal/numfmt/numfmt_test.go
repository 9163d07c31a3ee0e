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
