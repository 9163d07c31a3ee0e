package shard

import (
	"fmt"
	"strconv"
	"strings"
)

// Environment variables of a Kubernetes Indexed Job: Kubernetes sets
// JOB_COMPLETION_INDEX in every pod; the count is not exposed by Kubernetes, so
// the Job template sets CEILING_SHARD_COUNT to its completions
// (deploy/kubernetes/job.yaml).
const (
	EnvIndex = "JOB_COMPLETION_INDEX"
	EnvCount = "CEILING_SHARD_COUNT"
)

// FromEnv reads the shard from the environment: ok is false when neither
// variable is set (not sharded), and an error names the variable that is wrong.
func FromEnv(getenv func(string) string) (s Spec, ok bool, err error) {
	is, cs := getenv(EnvIndex), getenv(EnvCount)
	if is == "" && cs == "" {
		return Spec{}, false, nil
	}
	if is == "" || cs == "" {
		return Spec{}, true, fmt.Errorf("%s=%q and %s=%q: a shard needs both (the Job template sets %s to its completions)", EnvIndex, is, EnvCount, cs, EnvCount)
	}
	i, err := strconv.Atoi(is)
	if err != nil {
		return Spec{}, true, fmt.Errorf("%s=%q: not a whole number", EnvIndex, is)
	}
	n, err := strconv.Atoi(cs)
	if err != nil {
		return Spec{}, true, fmt.Errorf("%s=%q: not a whole number", EnvCount, cs)
	}
	s = Spec{Index: i, Count: n}
	return s, true, s.Validate()
}

// Disagreement says how the environment of a Kubernetes Indexed Job differs from
// an explicit shard, "" when it does not. The explicit shard wins (an Indexed Job
// sets JOB_COMPLETION_INDEX in every pod, whether or not its count is set), but a
// difference is worth a warning: pods of one Job given one --shard would all run
// the same share. A variable that is unset does not disagree.
func Disagreement(explicit Spec, getenv func(string) string) string {
	var diffs []string
	for _, v := range []struct {
		name string
		want int
	}{{EnvIndex, explicit.Index}, {EnvCount, explicit.Count}} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("%s=%q (not a whole number)", v.name, s))
		case n != v.want:
			diffs = append(diffs, fmt.Sprintf("%s=%d", v.name, n))
		}
	}
	return strings.Join(diffs, " and ")
}
