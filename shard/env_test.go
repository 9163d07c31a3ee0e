package shard

import "testing"

func TestDisagreement(t *testing.T) {
	explicit := Spec{Index: 0, Count: 3}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no environment", nil, ""},
		{"index agrees, count unset", map[string]string{EnvIndex: "0"}, ""},
		{"both agree", map[string]string{EnvIndex: "0", EnvCount: "3"}, ""},
		{"index differs", map[string]string{EnvIndex: "2"}, "JOB_COMPLETION_INDEX=2"},
		{"count differs", map[string]string{EnvIndex: "0", EnvCount: "4"}, "CEILING_SHARD_COUNT=4"},
		{"both differ", map[string]string{EnvIndex: "1", EnvCount: "4"}, "JOB_COMPLETION_INDEX=1 and CEILING_SHARD_COUNT=4"},
		{"not a number", map[string]string{EnvIndex: "x"}, `JOB_COMPLETION_INDEX="x" (not a whole number)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Disagreement(explicit, func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("Disagreement = %q, want %q", got, tt.want)
			}
		})
	}
}
