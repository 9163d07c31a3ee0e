package kubernetes

import (
	"os"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes a manifest into the Kubernetes API type, refusing unknown
// or duplicate fields, as the API server's strict field validation does.
func decodeStrict[T any](t *testing.T, file string) *T {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := yaml.UnmarshalStrict(data, &v); err != nil {
		t.Fatalf("%s does not decode strictly: %v", file, err)
	}
	return &v
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestManifestsDecodeStrictly(t *testing.T) {
	cm := decodeStrict[corev1.ConfigMap](t, "configmap.yaml")
	pvc := decodeStrict[corev1.PersistentVolumeClaim](t, "pvc.yaml")
	job := decodeStrict[batchv1.Job](t, "job.yaml")
	merge := decodeStrict[batchv1.Job](t, "merge-job.yaml")

	for _, o := range []struct{ file, kind, want string }{
		{"configmap.yaml", cm.Kind, "ConfigMap"}, {"pvc.yaml", pvc.Kind, "PersistentVolumeClaim"},
		{"job.yaml", job.Kind, "Job"}, {"merge-job.yaml", merge.Kind, "Job"},
	} {
		if o.kind != o.want {
			t.Errorf("%s: kind %q, want %q", o.file, o.kind, o.want)
		}
	}
	if _, ok := cm.Data["sweep.yaml"]; !ok {
		t.Errorf("the ConfigMap has no sweep.yaml: %v", cm.Data)
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("the traces volume is %v: every shard's pod mounts it, so it must be ReadWriteMany", pvc.Spec.AccessModes)
	}

	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("the sweep Job is not Indexed: JOB_COMPLETION_INDEX would not be set")
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Errorf("completions %v, parallelism %v: every shard must run at once", s.Completions, s.Parallelism)
	}
	c := s.Template.Spec.Containers[0]
	count := env(c, "CEILING_SHARD_COUNT")
	if count == nil || s.Completions == nil || count.Value != strings.TrimSpace(itoa(int(*s.Completions))) {
		t.Errorf("CEILING_SHARD_COUNT %v must equal completions %v", count, s.Completions)
	}
	if jn := env(c, "JOB_NAME"); jn == nil || jn.ValueFrom == nil || jn.ValueFrom.FieldRef == nil ||
		jn.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-name']" {
		t.Errorf("JOB_NAME must come from the job-name label: %+v", jn)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"record", "--run-id=$(JOB_NAME)", "--start-at=$(START_AT)", "$(JOB_COMPLETION_INDEX).parquet", "--config=/etc/ceiling/sweep.yaml"} {
		if !strings.Contains(args, want) {
			t.Errorf("the shard's args %q lack %q", args, want)
		}
	}
	claims := func(spec corev1.PodSpec) []string {
		var out []string
		for _, v := range spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				out = append(out, v.PersistentVolumeClaim.ClaimName)
			}
			if v.ConfigMap != nil && v.ConfigMap.Name != cm.Name {
				t.Errorf("volume %s names ConfigMap %q, the manifest's is %q", v.Name, v.ConfigMap.Name, cm.Name)
			}
		}
		return out
	}
	for _, j := range []*batchv1.Job{job, merge} {
		if got := claims(j.Spec.Template.Spec); !slices.Equal(got, []string{pvc.Name}) {
			t.Errorf("Job %s mounts claims %v, want [%s]", j.Name, got, pvc.Name)
		}
		if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("Job %s restarts its pods: a restarted shard would record its levels again, late", j.Name)
		}
	}
	margs := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.HasPrefix(margs, "merge /traces/"+job.Name+"-shard-*.parquet ") {
		t.Errorf("the merge Job reads %q, not the sweep Job's shards /traces/%s-shard-*.parquet", margs, job.Name)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
