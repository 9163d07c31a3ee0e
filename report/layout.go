package report

import (
	"encoding/json"
	"fmt"
)

// The layout every chart shares, applied to the option go-echarts built (as plain
// JSON maps, so the rules do not depend on which go-echarts fields exist). Chart
// text is at least 11 px: the print copy is drawn 700 px wide and printed about
// 700 px wide, so 11 px prints at about 8.3 pt. Text placement is left to echarts'
// own layout: axis labels hide when they would overlap, the grid contains its tick
// labels, a value axis names its unit above the axis instead of beside the tick
// labels (where a wide label such as "300,000" would run into it), and the page
// script moves the grid below the legend once the legend's height is known.

const (
	fontSize      = 12 // legend, axis names, mark labels
	smallFontSize = 11 // tick labels, point labels
)

// applyLayout rewrites the option m in place.
func applyLayout(m map[string]any) {
	m["textStyle"] = map[string]any{"fontSize": fontSize}
	if lg := first(m["legend"]); lg != nil {
		lg["type"] = "plain"
		lg["top"] = 0
		lg["itemGap"] = 14
		lg["textStyle"] = map[string]any{"fontSize": fontSize}
	}
	if g := first(m["grid"]); g != nil {
		g["containLabel"] = true
		g["left"], g["right"], g["bottom"] = 12, 28, 34
		if _, ok := g["top"]; !ok {
			g["top"] = 56
		}
	}
	for _, x := range all(m["xAxis"]) {
		x["nameLocation"] = "middle"
		x["nameGap"] = 28
		x["nameTextStyle"] = map[string]any{"fontSize": fontSize}
		x["axisLabel"] = merge(x["axisLabel"], map[string]any{"fontSize": smallFontSize, "hideOverlap": true})
	}
	for _, y := range all(m["yAxis"]) {
		y["nameLocation"] = "end"
		if inv, _ := y["inverse"].(bool); inv {
			y["nameLocation"] = "start" // the top, on an inverted axis
		}
		y["nameGap"] = 12
		y["nameTextStyle"] = map[string]any{"fontSize": fontSize, "align": "left", "padding": []int{0, 0, 0, -8}}
		// lineHeight spaces a two-line category label (run, then GPU) apart.
		y["axisLabel"] = merge(y["axisLabel"], map[string]any{"fontSize": smallFontSize, "hideOverlap": true, "lineHeight": 15})
	}
	if t := first(m["title"]); t != nil {
		t["subtextStyle"] = map[string]any{"fontSize": smallFontSize}
	}
}

// layoutJSON re-reads a go-echarts option as plain maps, applies the layout and
// encodes it.
func layoutJSON(opt map[string]interface{}) (json.RawMessage, error) {
	raw, err := json.Marshal(opt)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("re-reading the option: %w", err)
	}
	applyLayout(m)
	return json.Marshal(m)
}

// all returns the objects of an option that may be one object or a list of them.
func all(v any) []map[string]any {
	switch v := v.(type) {
	case map[string]any:
		return []map[string]any{v}
	case []any:
		var out []map[string]any
		for _, e := range v {
			if o, ok := e.(map[string]any); ok {
				out = append(out, o)
			}
		}
		return out
	}
	return nil
}

func first(v any) map[string]any {
	if xs := all(v); len(xs) > 0 {
		return xs[0]
	}
	return nil
}

// merge returns base (an object or nil) with the keys of over set.
func merge(base any, over map[string]any) map[string]any {
	out, _ := base.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
