package capacity

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hostile or broken config.json files and budget inputs (issue 8, items 12 and 17):
// every one is refused with an error naming the field and what is wrong with its
// value, never a panic, a huge allocation or a negative size.

// llamaish is a complete dense config with one field replaced by raw JSON.
func llamaish(field, value string) string {
	base := map[string]string{
		"num_hidden_layers": "32", "hidden_size": "4096", "num_attention_heads": "32",
		"num_key_value_heads": "8", "head_dim": "128", "vocab_size": "128256",
		"intermediate_size": "14336", "max_position_embeddings": "131072",
	}
	base[field] = value
	var b strings.Builder
	b.WriteString("{")
	first := true
	for k, v := range base {
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString(`"` + k + `":` + v)
	}
	b.WriteString("}")
	return b.String()
}

// Item 12: sizes beyond any plausible model are refused before anything is sized by
// them. num_hidden_layers 1e18 used to panic in makeslice, 1e9 to allocate gigabytes,
// intermediate_size 1e17 to print a negative weight size.
func TestConfigRefusesImplausibleSizes(t *testing.T) {
	for _, tt := range []struct{ field, value string }{
		{"num_hidden_layers", "1e18"},
		{"num_hidden_layers", "1e9"},
		{"num_hidden_layers", "1e300"},
		{"intermediate_size", "1e17"},
		{"hidden_size", "1e12"},
		{"num_attention_heads", "1e7"},
		{"num_key_value_heads", "1e7"},
		{"head_dim", "1e9"},
		{"vocab_size", "1e15"},
		{"max_position_embeddings", "1e30"},
	} {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic: %v", p)
					}
				}()
				var c *ModelConfig
				c, err = ParseModelConfig([]byte(llamaish(tt.field, tt.value)))
				if err == nil {
					// Whatever got through must still give sane, positive sizes.
					var p *PlanResult
					p, err = PlanBudget(c, BudgetInput{GPU: "h100-sxm", GPUs: 8})
					if err == nil && (p.Budget.WeightsBytes <= 0 || p.Budget.KVBudgetBytes <= 0) {
						t.Fatalf("accepted with weights %d and KV budget %d bytes", p.Budget.WeightsBytes, p.Budget.KVBudgetBytes)
					}
				}
			}()
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), `"`+tt.field+`"`) || !strings.Contains(err.Error(), "at most") {
				t.Errorf("error %q should name %q and its plausible maximum", err, tt.field)
			}
		})
	}
	// Every size at its maximum: the weight estimate would overflow int64.
	c, err := ParseModelConfig([]byte(`{"num_hidden_layers":4096,"hidden_size":131072,"num_attention_heads":4096,
	 "num_key_value_heads":4096,"head_dim":4096,"vocab_size":16777216,"intermediate_size":262144,
	 "n_routed_experts":4096,"n_shared_experts":4096,"moe_intermediate_size":262144,"torch_dtype":"float32"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := WeightBytes(c, "", 0); err == nil || !strings.Contains(err.Error(), "parameters") {
		t.Errorf("weights of %d layers of 4096 experts: error %v, want an implausible parameter count", c.Layers, err)
	}
	// The largest published models stay well inside the bounds.
	for _, name := range []string{"kimi-k2.5.json", "deepseek-v3.json", "llama-3.1-70b.json", "qwen3-32b.json", "gpt-oss-120b.json", "llama-3.1-8b.json"} {
		if _, err := LoadModelConfig("../samples/models/" + name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Item 17: a value of the wrong kind is not "missing": the error says what the value
// is and what was wanted.
func TestConfigSaysWhatIsWrongWithAValue(t *testing.T) {
	for _, tt := range []struct{ field, value, want string }{
		{"num_hidden_layers", `"32"`, `field "num_hidden_layers" is "32" (a string), want a whole number`},
		{"num_hidden_layers", `-4`, `field "num_hidden_layers" is -4, want a whole number of at least 1`},
		{"num_hidden_layers", `0`, `field "num_hidden_layers" is 0, want a whole number of at least 1`},
		{"num_hidden_layers", `32.5`, `field "num_hidden_layers" is 32.5, want a whole number`},
		{"num_hidden_layers", `true`, `field "num_hidden_layers" is true (a boolean), want a whole number`},
		{"num_hidden_layers", `[32]`, `field "num_hidden_layers" is a list, want a whole number`},
		{"num_key_value_heads", `-8`, `field "num_key_value_heads" is -8, want a whole number`},
		{"head_dim", `"128"`, `field "head_dim" is "128" (a string)`},
		{"intermediate_size", `-1`, `field "intermediate_size" is -1`},
	} {
		_, err := ParseModelConfig([]byte(llamaish(tt.field, tt.value)))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "missing") {
			t.Errorf("%s = %s: error %v, want %q (not \"missing\")", tt.field, tt.value, err, tt.want)
		}
	}
	// Absent is still "missing", and JSON null is absent.
	for _, cfg := range []string{`{"hidden_size":10}`, `{"num_hidden_layers":null}`} {
		if _, err := ParseModelConfig([]byte(cfg)); err == nil || !strings.Contains(err.Error(), `missing field "num_hidden_layers"`) {
			t.Errorf("%s: error %v, want missing num_hidden_layers", cfg, err)
		}
	}
}

// Item 12 and 14: the config path is read only when it is a regular file of a
// plausible size: a FIFO would block forever, /dev/zero would never end.
func TestLoadModelConfigRefusesNonRegularAndHuge(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadModelConfig(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("FIFO: error %v, want one naming %s as not a regular file", err, fifo)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("LoadModelConfig blocked on a FIFO")
	}

	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxConfigBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := LoadModelConfig(huge); err == nil || !strings.Contains(err.Error(), huge) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge file: error %v, want one naming %s as too large", err, huge)
	}
}

// Item 12: budget inputs beyond any plausible deployment, and NaN, are refused naming
// the field, instead of overflowing into negative or nonsense sizes.
func TestBudgetInputBounds(t *testing.T) {
	c := loadSample(t, "llama-3.1-8b.json")
	ok := BudgetInput{GPU: "h100-sxm"}
	for _, tt := range []struct {
		field string
		edit  func(*BudgetInput)
	}{
		{"BudgetInput.GPUs", func(in *BudgetInput) { in.GPUs = 1 << 40 }},
		{"BudgetInput.TP", func(in *BudgetInput) { in.TP = 1 << 40 }},
		{"BudgetInput.MemoryGiB", func(in *BudgetInput) { in.MemoryGiB = 1e30 }},
		{"BudgetInput.MemoryGiB", func(in *BudgetInput) { in.MemoryGiB = math.NaN() }},
		{"BudgetInput.WeightsGiB", func(in *BudgetInput) { in.WeightsGiB = 1e30 }},
		{"BudgetInput.ReserveGiB", func(in *BudgetInput) { in.ReserveGiB = 1e30 }},
		{"BudgetInput.ParamsB", func(in *BudgetInput) { in.ParamsB = 1e20 }},
		{"BudgetInput.Utilization", func(in *BudgetInput) { in.Utilization = math.NaN() }},
	} {
		in := ok
		tt.edit(&in)
		_, err := PlanBudget(c, in)
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%+v: error %v, want one naming %s", in, err, tt.field)
		}
		if err := in.Check(); err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("Check %+v: error %v, want one naming %s", in, err, tt.field)
		}
	}
	if err := ok.Check(); err != nil {
		t.Errorf("plain input refused: %v", err)
	}
}
