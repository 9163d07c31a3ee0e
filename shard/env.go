package shard

import (
	"fmt"
	"strconv"
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
