// Package searchrule is the rule the ceiling search judges a level by: the
// criteria a level must pass (latency SLOs at a percentile, the share of failed
// requests, goodput, the server's KV evidence), the figures of one analysed level
// those criteria read, and the judgement.
//
// The recorder runs the search and package analyze computes the figures; this
// package sits between them so that the recorder does not import the analysis (the
// recorder is handed an Analyzer, which the command line builds from analyze), in
// the way package levelrule is the one rule for a level's validity. It imports
// nothing of this module.
package searchrule
