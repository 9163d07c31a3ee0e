// Package analysistext renders an analysis (an *analyze.Analysis, and the results
// of a what-if) for people and programs: as text (aligned tables for a terminal),
// Markdown (to paste into a deployment review) or JSON (the Analysis itself, a
// public interface). It lays out what package analyze computed and computes
// nothing itself: every figure and sentence it prints is in the Analysis (the
// tests render analyze's golden JSON and get the golden text), and the numbers are
// written by package numfmt, as the analysis's own sentences write them.
//
// Server- and user-supplied text is made literal in every format: no terminal
// control or bidi override reaches the text output, no Markdown or HTML syntax the
// Markdown one.
package analysistext
