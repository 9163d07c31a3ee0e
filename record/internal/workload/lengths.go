package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// LengthSyntax is the accepted forms of a length flag, for error messages.
const LengthSyntax = "N, uniform:MIN-MAX, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or dataset"

// Lengths is a distribution of request lengths in tokens (prompt or output), as
// --prompt-tokens and --output-tokens give it. Draws are whole tokens, at least 1.
type Lengths struct {
	Kind string  // "fixed", "uniform", "normal", "lognormal" or "dataset"
	A, B float64 // fixed: A; uniform: A-B; normal: mean A, sd B; lognormal: median A, sigma B
}

// ParseLengths reads a length flag's value: "2000", "uniform:500-4000",
// "normal:2000,400", "lognormal:2000,0.6" or "dataset".
func ParseLengths(s string) (Lengths, error) {
	s = strings.TrimSpace(s)
	kind, args, hasArgs := strings.Cut(s, ":")
	kind = strings.ToLower(kind)
	num := func(v string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	}
	two := func(sep string) (float64, float64, error) {
		x, y, ok := strings.Cut(args, sep)
		if !ok {
			return 0, 0, fmt.Errorf("want two numbers separated by %q", sep)
		}
		a, err := num(x)
		if err != nil {
			return 0, 0, err
		}
		b, err := num(y)
		return a, b, err
	}
	var l Lengths
	var err error
	switch {
	case !hasArgs && kind == "dataset":
		return Lengths{Kind: "dataset"}, nil
	case !hasArgs:
		n, perr := strconv.Atoi(s)
		if perr != nil || n < 1 {
			return Lengths{}, fmt.Errorf("%q: want a positive whole number of tokens or %s", s, LengthSyntax)
		}
		return Lengths{Kind: "fixed", A: float64(n)}, nil
	case kind == "uniform":
		l.Kind = kind
		l.A, l.B, err = two("-")
		if err == nil && (l.A < 1 || l.B < l.A) {
			err = errors.New("want 1 <= MIN <= MAX")
		}
	case kind == "normal":
		l.Kind = kind
		l.A, l.B, err = two(",")
		if err == nil && (l.A < 1 || l.B < 0) {
			err = errors.New("want MEAN >= 1 and SD >= 0")
		}
	case kind == "lognormal":
		l.Kind = kind
		l.A, l.B, err = two(",")
		if err == nil && (l.A < 1 || l.B < 0 || l.B > 5) {
			err = errors.New("want MEDIAN >= 1 and 0 <= SIGMA <= 5")
		}
	default:
		return Lengths{}, fmt.Errorf("%q: unknown distribution %q; want %s", s, kind, LengthSyntax)
	}
	if err != nil {
		return Lengths{}, fmt.Errorf("%q: %v (want %s)", s, err, LengthSyntax)
	}
	return l, nil
}

// String is the flag syntax of l (ParseLengths reads it back).
func (l Lengths) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch l.Kind {
	case "fixed":
		return f(l.A)
	case "uniform":
		return "uniform:" + f(l.A) + "-" + f(l.B)
	case "normal", "lognormal":
		return l.Kind + ":" + f(l.A) + "," + f(l.B)
	}
	return l.Kind
}

// Fixed reports whether every draw is the same length.
func (l Lengths) Fixed() bool {
	return l.Kind == "fixed" || (l.Kind == "uniform" && l.A == l.B) || (l.Kind != "dataset" && l.B == 0)
}

// Draw returns one length from rng. Continuous distributions are rounded to whole
// tokens; normal and lognormal draws below 1 are drawn again (truncation at 1).
func (l Lengths) Draw(rng *rand.Rand) int {
	switch l.Kind {
	case "uniform":
		lo, hi := int(math.Ceil(l.A)), int(math.Floor(l.B))
		if hi <= lo {
			return max(1, lo)
		}
		return lo + rng.IntN(hi-lo+1)
	case "normal":
		for range 1000 {
			if v := math.Round(l.A + l.B*rng.NormFloat64()); v >= 1 {
				return int(v)
			}
		}
		return max(1, int(math.Round(l.A)))
	case "lognormal":
		for range 1000 {
			if v := math.Round(l.A * math.Exp(l.B*rng.NormFloat64())); v >= 1 {
				return int(v)
			}
		}
		return max(1, int(math.Round(l.A)))
	}
	return max(1, int(math.Round(l.A)))
}

// CDF is P(draw <= x) of the continuous distribution before rounding, truncated
// at 1 for normal and lognormal: what a goodness-of-fit test compares draws with.
func (l Lengths) CDF(x float64) float64 {
	switch l.Kind {
	case "uniform":
		if l.B <= l.A {
			return step(x, l.A)
		}
		return clamp01((x - l.A) / (l.B - l.A))
	case "normal":
		if l.B == 0 {
			return step(x, l.A)
		}
		phi := func(v float64) float64 { return 0.5 * math.Erfc(-(v-l.A)/(l.B*math.Sqrt2)) }
		lo := phi(0.5) // draws round to >= 1, i.e. the continuous value is >= 0.5
		return clamp01((phi(x) - lo) / (1 - lo))
	case "lognormal":
		if l.B == 0 || x <= 0 {
			return step(x, l.A)
		}
		return clamp01(0.5 * math.Erfc(-math.Log(x/l.A)/(l.B*math.Sqrt2)))
	}
	return step(x, l.A)
}

// Quantile is the q-quantile of the distribution (q in (0,1)), for the run info and
// for sizing (the --concurrency auto cap uses the p99 request).
func (l Lengths) Quantile(q float64) float64 {
	switch l.Kind {
	case "uniform":
		return l.A + q*(l.B-l.A)
	case "normal":
		lo := 0.5 * math.Erfc(-(0.5-l.A)/(l.B*math.Sqrt2))
		if l.B == 0 {
			return l.A
		}
		p := lo + q*(1-lo)
		return l.A + l.B*math.Sqrt2*math.Erfinv(2*p-1)
	case "lognormal":
		return l.A * math.Exp(l.B*math.Sqrt2*math.Erfinv(2*q-1))
	}
	return l.A
}

func step(x, at float64) float64 {
	if x < at {
		return 0
	}
	return 1
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// lengthRNG is the random stream of request id's length draws: stream 1 for prompt
// lengths, 2 for output lengths, apart from the words of the prompt itself.
// PCG's first outputs are correlated for seeds that differ little, so id and
// stream are mixed (splitmix64) before seeding.
func lengthRNG(seed uint64, id int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(mix(seed^stream<<56), mix(uint64(id)^stream)))
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
