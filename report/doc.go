// Package report writes one self-contained HTML file from an analyze.Analysis: a
// verdict line, the key numbers, warnings, charts (echarts 5.4.3, embedded and
// unpacked in the browser) and tables, readable offline.
package report
