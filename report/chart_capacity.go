package report

// The memory budget per GPU and KV demand against capacity.

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

func memoryChart(b *chartBuilder, runs []analyze.Run, labels []string) (chartView, bool) {
	type comp struct {
		name, color string
		get         func(*analyze.Budget) int64
	}
	comps := []comp{
		{"Weights", "#4E79A7", func(b *analyze.Budget) int64 { return b.WeightsBytes }},
		{"KV cache budget", "#59A14F", func(b *analyze.Budget) int64 { return b.KVBudgetBytes }},
		{"Activation reserve", "#F28E2B", func(b *analyze.Budget) int64 { return b.ReserveBytes }},
		{"Held back (1 − utilization)", "#BAB0AC", func(b *analyze.Budget) int64 { return b.UnusableBytes }},
		{"Unallocated", "#E8E8E8", func(b *analyze.Budget) int64 {
			free := b.MemoryBytes - b.WeightsBytes - b.KVBudgetBytes - b.ReserveBytes - b.UnusableBytes
			if free < 0 {
				return 0
			}
			return free
		}},
	}
	var cats []string
	var budgets []*analyze.Budget
	for i := range runs {
		if c := runs[i].Capacity; c != nil && c.Budget != nil {
			bd := c.Budget
			cat := fmt.Sprintf("%s × %d, TP %d", bd.GPU, bd.GPUs, bd.TP)
			if len(runs) > 1 {
				cat = labels[i] + "\n" + cat
			}
			cats = append(cats, cat)
			budgets = append(budgets, bd)
		}
	}
	if len(budgets) == 0 {
		return chartView{}, false
	}
	c := charts.NewBar()
	c.SetGlobalOptions(append(baseOpts("memory"),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Memory per GPU (GiB)"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: cats, Inverse: opts.Bool(true)}),
	)...)
	c.Accept(optionPatch{fn: func(m map[string]interface{}) {
		if t, ok := m["tooltip"].(opts.Tooltip); ok {
			_ = t
			m["tooltip"] = map[string]interface{}{"show": true, "trigger": "axis", "axisPointer": map[string]string{"type": "shadow"}}
		}
	}})
	for _, cp := range comps {
		data := make([]interface{}, len(budgets))
		var any bool
		for k, bd := range budgets {
			v := round(float64(cp.get(bd))/(1<<30), 1)
			data[k] = v
			any = any || v > 0
		}
		if !any {
			continue // e.g. nothing unallocated: no empty legend entry
		}
		// The value inside each segment that has room for it (a sixth of the GPU
		// holds "99.9 GiB" at the narrowest chart); smaller segments are named by the
		// legend and the tooltip, and echarts hides any label that would still
		// overlap another.
		for k, bd := range budgets {
			if float64(cp.get(bd)) < float64(bd.MemoryBytes)/6 {
				data[k] = map[string]interface{}{"value": data[k], "label": map[string]bool{"show": false}}
			}
		}
		s := charts.SingleSeries{Name: cp.name, Type: "bar", Stack: "memory", Data: data, BarMaxWidth: "56"}
		s.ItemStyle = &opts.ItemStyle{Color: cp.color}
		s.Label = &opts.Label{Show: opts.Bool(true), Position: "inside", Formatter: "{c} GiB", Color: "#1d2330", FontSize: smallFontSize}
		s.LabelLayout = &opts.LabelLayout{HideOverlap: opts.Bool(true)}
		c.MultiSeries = append(c.MultiSeries, s)
	}
	caption := "One GPU: the server may use memory × utilization; weights and the activation reserve come off the top and the rest is KV cache."
	return b.add(c, "", "GiB", "GiB", "Memory per GPU", caption, false, max(300, 140+70*len(budgets))), true
}

func hasCapacity(runs []analyze.Run) bool {
	for _, r := range runs {
		if r.Capacity != nil && r.Capacity.KVCapacityTokens != nil {
			return true
		}
	}
	return false
}

func kvChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) chartView {
	ax = ax.reaching(runs)
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("kv"),
		charts.WithXAxisOpts(ax.xAxis()),
		charts.WithYAxisOpts(yAxis("KV cache (tokens)")))...)
	c.Accept(patchLogBase2(ax))
	var hs []markLine
	var vs []mark
	for i := range runs {
		r := &runs[i]
		var mean, p99 []pt
		for j := range r.Levels {
			l := &r.Levels[j]
			x := float64(l.Concurrency)
			if ax.rate {
				// open loop: demand follows the requests actually in flight
				x = l.DecodeConcurrency + l.WaitingConcurrency
			}
			mean = append(mean, pt{levelXValue(l, ax.rate), x * (l.MeanPromptTokens + l.MeanOutputTokens)})
			if r.Capacity != nil && r.Capacity.P99RequestTokens != nil {
				p99 = append(p99, pt{levelXValue(l, ax.rate), x * *r.Capacity.P99RequestTokens})
			}
		}
		sm := lineSeries(seriesName(labels, i, "demand, mean request"), points(mean), runColor(i), "solid", true)
		if cp := r.Capacity; cp != nil {
			if cp.KVCapacityTokens != nil {
				hs = append(hs, hline(float64(*cp.KVCapacityTokens), "capacity "+fmtInt(*cp.KVCapacityTokens)+" ("+cp.Source+")", capColor(len(runs), i, "#B00020"), "solid"))
			}
			if cp.Source != "modelled" && cp.ModelledKVCapacityTokens != nil {
				hs = append(hs, hline(float64(*cp.ModelledKVCapacityTokens), "modelled "+fmtInt(*cp.ModelledKVCapacityTokens), capColor(len(runs), i, "#7B3294"), "dashed"))
			}
		}
		if v := r.Ceilings.KV; v != nil && !ax.rate {
			vs = append(vs, mark{x: *v, text: "KV ceiling " + fmtConc(*v), color: capColor(len(runs), i, "#7B3294")})
		}
		c.MultiSeries = append(c.MultiSeries, sm)
		if len(p99) > 0 {
			s := lineSeries(seriesName(labels, i, "demand, p99 request"), points(p99), runColor(i), "dashed", false)
			c.MultiSeries = append(c.MultiSeries, s)
		}
	}
	if len(c.MultiSeries) > 0 {
		lines := append(stackedHLines(hs), verticalMarksFrom(vs, ax, 1)...)
		first := c.MultiSeries[0]
		withMarkLines(&first, lines)
		c.MultiSeries[0] = first
	}
	caption := "Demand = requests in flight × tokens per request (prompt + output, the most a request holds at its end). Where demand crosses capacity the server must queue or preempt; the KV ceiling marks that crossing, on an axis extended past the sweep when it lies beyond."
	return b.add(c, "", "", "tokens", "KV cache demand vs capacity", caption, false, 360)
}
