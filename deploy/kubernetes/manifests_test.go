package kubernetes

import (
	"bytes"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The image's user (deploy/image): runAsUser must repeat it.
const imageUser = 65532

// decodeStrict decodes a manifest into the Kubernetes API type, refusing unknown
// or duplicate fields, as the API server's strict field validation does.
func decodeStrict[T any](t *testing.T, file string) *T {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return decodeBytes[T](t, file, data)
}

func decodeBytes[T any](t *testing.T, what string, data []byte) *T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict(data, &v); err != nil {
		t.Fatalf("%s does not decode strictly: %v", what, err)
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

// rendered is what `kubectl apply -k DIR` sends to the cluster, decoded strictly.
type rendered struct {
	configMaps map[string]*corev1.ConfigMap
	pvcs       []*corev1.PersistentVolumeClaim
	sweep      *batchv1.Job
	merge      *batchv1.Job
}

// render builds a kustomization with kustomize's own library (the one kubectl
// apply -k embeds) and decodes every object it makes into its API type.
func render(t *testing.T, dir string) rendered {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := rendered{configMaps: map[string]*corev1.ConfigMap{}}
	for _, res := range m.Resources() {
		data, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		what := dir + ": " + res.GetKind() + " " + res.GetName()
		switch res.GetKind() {
		case "ConfigMap":
			cm := decodeBytes[corev1.ConfigMap](t, what, data)
			r.configMaps[cm.Name] = cm
		case "PersistentVolumeClaim":
			r.pvcs = append(r.pvcs, decodeBytes[corev1.PersistentVolumeClaim](t, what, data))
		case "Job":
			job := decodeBytes[batchv1.Job](t, what, data)
			if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion {
				r.sweep = job
			} else {
				r.merge = job
			}
		default:
			// A Secret here would put the API key in these files.
			t.Errorf("%s: unexpected object", what)
		}
	}
	if r.sweep == nil || r.merge == nil || len(r.pvcs) != 1 {
		t.Fatalf("%s renders sweep Job %v, merge Job %v, %d volume claims", dir, r.sweep != nil, r.merge != nil, len(r.pvcs))
	}
	return r
}

// generated finds the ConfigMap kustomize generated as name (NAME-HASH).
func (r rendered) generated(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	for n, cm := range r.configMaps {
		if strings.HasPrefix(n, name+"-") {
			return cm
		}
	}
	t.Fatalf("no ConfigMap %s generated among %v", name, slices.Collect(mapKeys(r.configMaps)))
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestManifestsDecodeStrictly(t *testing.T) {
	cm := decodeStrict[corev1.ConfigMap](t, "configmap.yaml")
	pvc := decodeStrict[corev1.PersistentVolumeClaim](t, "pvc.yaml")
	job := decodeStrict[batchv1.Job](t, "job.yaml")
	merge := decodeStrict[batchv1.Job](t, "merge-job.yaml")
	secret := decodeStrict[corev1.Secret](t, "secret.example.yaml")
	k := decodeStrict[types.Kustomization](t, "kustomization.yaml")
	kind := decodeStrict[types.Kustomization](t, filepath.Join("..", "kind", "kustomization.yaml"))

	for _, o := range []struct{ file, kind, want string }{
		{"configmap.yaml", cm.Kind, "ConfigMap"}, {"pvc.yaml", pvc.Kind, "PersistentVolumeClaim"},
		{"job.yaml", job.Kind, "Job"}, {"merge-job.yaml", merge.Kind, "Job"}, {"secret.example.yaml", secret.Kind, "Secret"},
		{"kustomization.yaml", k.Kind, "Kustomization"}, {"../kind/kustomization.yaml", kind.Kind, "Kustomization"},
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
	// The kustomization applies every manifest but the example Secret, whose
	// placeholder would otherwise replace the user's key at each apply.
	for _, f := range []string{"configmap.yaml", "pvc.yaml", "job.yaml", "merge-job.yaml"} {
		if !slices.Contains(k.Resources, f) {
			t.Errorf("kustomization.yaml does not apply %s: %v", f, k.Resources)
		}
	}
	if slices.Contains(k.Resources, "secret.example.yaml") {
		t.Errorf("kustomization.yaml applies the example Secret: its placeholder would overwrite the real key")
	}
	if v := secret.StringData["api-key"]; !strings.Contains(v, "REPLACE") || len(secret.Data) != 0 {
		t.Errorf("the example Secret holds %q (and data %v): it must hold only a placeholder", v, secret.Data)
	}

	// kubectl apply -f runs the files' own image: the one the kustomization sets.
	for _, j := range []*batchv1.Job{job, merge} {
		for _, c := range j.Spec.Template.Spec.Containers {
			if len(k.Images) != 1 || c.Image != k.Images[0].NewName+":"+k.Images[0].NewTag {
				t.Errorf("%s runs %q; the kustomization sets %+v", j.Name, c.Image, k.Images)
			}
		}
	}

	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("the sweep Job is not Indexed: JOB_COMPLETION_INDEX would not be set")
	}
	c := s.Template.Spec.Containers[0]
	if jn := env(c, "JOB_NAME"); jn == nil || jn.ValueFrom == nil || jn.ValueFrom.FieldRef == nil ||
		jn.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/job-name']" {
		t.Errorf("JOB_NAME must come from the job-name label: %+v", jn)
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"record", "--url=$(CEILING_URL)", "--run-id=$(JOB_NAME)", "--start-at=$(START_AT)", "$(JOB_COMPLETION_INDEX).parquet", "--config=/etc/ceiling/sweep.yaml"} {
		if !strings.Contains(args, want) {
			t.Errorf("the shard's args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--api-key-env") {
		t.Errorf("the shard's args %q move the API key away from OPENAI_API_KEY, where the Secret puts it", args)
	}
	if key := env(c, "OPENAI_API_KEY"); key == nil || key.Value != "" || key.ValueFrom == nil || key.ValueFrom.SecretKeyRef == nil ||
		key.ValueFrom.SecretKeyRef.Name != secret.Name || secret.StringData[key.ValueFrom.SecretKeyRef.Key] == "" {
		t.Errorf("OPENAI_API_KEY must come from the Secret %s (secret.example.yaml) by a secretKeyRef: %+v", secret.Name, key)
	}
	for _, j := range []*batchv1.Job{job, merge} {
		if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("Job %s restarts its pods: a restarted shard would record its levels again, late", j.Name)
		}
	}
	margs := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.HasPrefix(margs, "merge /traces/"+job.Name+"-shard-*.parquet ") {
		t.Errorf("the merge Job reads %q, not the sweep Job's shards /traces/%s-shard-*.parquet", margs, job.Name)
	}
	if merge.Spec.Suspend == nil || !*merge.Spec.Suspend {
		t.Errorf("the merge Job is not created suspended: applied with the sweep, it would merge before the shards are written")
	}
}

// TestKustomization checks what `kubectl apply -k` sends, for the base and for
// the kind overlay: the settings of the one ConfigMap reach the Jobs, and every
// pod and container is one a cluster admin accepts.
func TestKustomization(t *testing.T) {
	k := decodeStrict[types.Kustomization](t, "kustomization.yaml")
	if len(k.Images) != 1 || k.Images[0].Name != "ceiling" {
		t.Fatalf("kustomization.yaml sets images %+v, want the one named ceiling", k.Images)
	}
	image := k.Images[0].NewName + ":" + k.Images[0].NewTag
	if k.Images[0].NewTag == "" || k.Images[0].NewTag == "latest" {
		t.Errorf("the image %s has no version: nodes would run whichever build they pulled first", image)
	}
	for _, dir := range []string{".", filepath.Join("..", "kind")} {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			run := r.generated(t, "ceiling-run")
			checkSettings(t, r, run)
			for _, j := range []*batchv1.Job{r.sweep, r.merge} {
				checkJob(t, r, j, image)
			}
			modes := r.pvcs[0].Spec.AccessModes
			if want := map[string]corev1.PersistentVolumeAccessMode{".": corev1.ReadWriteMany, filepath.Join("..", "kind"): corev1.ReadWriteOnce}[dir]; !slices.Equal(modes, []corev1.PersistentVolumeAccessMode{want}) {
				t.Errorf("the traces volume is %v, want %s", modes, want)
			}
			for _, j := range []*batchv1.Job{r.sweep, r.merge} {
				if got := claims(t, r, j.Spec.Template.Spec); !slices.Equal(got, []string{r.pvcs[0].Name}) {
					t.Errorf("Job %s mounts claims %v, want [%s]", j.Name, got, r.pvcs[0].Name)
				}
			}
		})
	}
}

// TestKustomizationSettings changes the shard count, start time and URL in
// kustomization.yaml alone (as a user does, in a copy) and checks that the
// rendered sweep Job follows all three.
func TestKustomizationSettings(t *testing.T) {
	fs := filesys.MakeFsInMemory()
	for _, f := range []string{"configmap.yaml", "pvc.yaml", "job.yaml", "merge-job.yaml", "kustomization.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if f == "kustomization.yaml" {
			data = regexp.MustCompile(`(?m)^(\s+- )(shards|start-at|url)=.*$`).ReplaceAllFunc(data, func(line []byte) []byte {
				key := regexp.MustCompile(`(shards|start-at|url)=`).Find(line)
				v := map[string]string{"shards=": "7", "start-at=": "2027-01-02T03:04:05Z", "url=": "https://llm.example:8443"}[string(key)]
				return append(line[:bytes.Index(line, key)+len(key)], v...)
			})
		}
		if err := fs.WriteFile(filepath.Join("/k", f), data); err != nil {
			t.Fatal(err)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/k")
	if err != nil {
		t.Fatal(err)
	}
	var job *batchv1.Job
	var run *corev1.ConfigMap
	for _, res := range m.Resources() {
		data, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case res.GetKind() == "Job" && res.GetName() == "ceiling-sweep-1":
			job = decodeBytes[batchv1.Job](t, "the sweep Job", data)
		case res.GetKind() == "ConfigMap" && strings.HasPrefix(res.GetName(), "ceiling-run-"):
			run = decodeBytes[corev1.ConfigMap](t, "ceiling-run", data)
		}
	}
	if job == nil || run == nil {
		t.Fatalf("rendered sweep Job %v, ceiling-run %v", job != nil, run != nil)
	}
	want := map[string]string{"shards": "7", "start-at": "2027-01-02T03:04:05Z", "url": "https://llm.example:8443"}
	for k, v := range want {
		if run.Data[k] != v {
			t.Errorf("ceiling-run %s = %q, want %q (the edit did not take)", k, run.Data[k], v)
		}
	}
	s := job.Spec
	if s.Completions == nil || *s.Completions != 7 || s.Parallelism == nil || *s.Parallelism != 7 {
		t.Errorf("with shards=7, completions %v and parallelism %v", s.Completions, s.Parallelism)
	}
	c := s.Template.Spec.Containers[0]
	for name, key := range map[string]string{"CEILING_SHARD_COUNT": "shards", "START_AT": "start-at", "CEILING_URL": "url"} {
		if e := env(c, name); e == nil || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil ||
			e.ValueFrom.ConfigMapKeyRef.Name != run.Name || e.ValueFrom.ConfigMapKeyRef.Key != key {
			t.Errorf("%s does not come from %s of %s: %+v", name, key, run.Name, e)
		}
	}
}

// checkSettings: the shard count, start time and URL of ceiling-run are valid
// and reach the sweep Job (completions, parallelism and its environment).
func checkSettings(t *testing.T, r rendered, run *corev1.ConfigMap) {
	t.Helper()
	shards, err := strconv.Atoi(run.Data["shards"])
	if err != nil || shards < 1 {
		t.Errorf("shards %q is not a count", run.Data["shards"])
	}
	s := r.sweep.Spec
	if s.Completions == nil || s.Parallelism == nil || int(*s.Completions) != shards || int(*s.Parallelism) != shards {
		t.Errorf("completions %v, parallelism %v: both must be the shard count %d, every shard at once", s.Completions, s.Parallelism, shards)
	}
	if _, err := time.Parse(time.RFC3339, run.Data["start-at"]); err != nil {
		t.Errorf("start-at %q: %v", run.Data["start-at"], err)
	}
	if u, err := url.Parse(run.Data["url"]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Errorf("url %q is not a server's http(s) URL", run.Data["url"])
	}
	c := s.Template.Spec.Containers[0]
	for name, key := range map[string]string{"CEILING_SHARD_COUNT": "shards", "START_AT": "start-at", "CEILING_URL": "url"} {
		e := env(c, name)
		if e == nil || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil ||
			e.ValueFrom.ConfigMapKeyRef.Name != run.Name || e.ValueFrom.ConfigMapKeyRef.Key != key {
			t.Errorf("%s must come from key %s of ConfigMap %s: %+v", name, key, run.Name, e)
		}
	}

	// The deadline counts from the Job's creation: it must hold the sweep's levels.
	var sweep struct {
		Concurrency []int  `json:"concurrency"`
		Duration    string `json:"duration-per-level"`
		Gap         string `json:"schedule-gap"`
	}
	if err := yaml.Unmarshal([]byte(r.configMaps["ceiling-sweep"].Data["sweep.yaml"]), &sweep); err != nil {
		t.Fatal(err)
	}
	d, err1 := time.ParseDuration(sweep.Duration)
	gap, err2 := time.ParseDuration(sweep.Gap)
	if err1 != nil || err2 != nil || len(sweep.Concurrency) == 0 {
		t.Fatalf("sweep.yaml: %+v, %v, %v", sweep, err1, err2)
	}
	need := time.Duration(len(sweep.Concurrency)) * (d + gap)
	if dl := s.ActiveDeadlineSeconds; dl == nil || time.Duration(*dl)*time.Second < 2*need {
		t.Errorf("the sweep Job's deadline %v s leaves too little room for its %d levels (%v), the wait for start-at and the image pull", dl, len(sweep.Concurrency), need)
	}
}

// checkJob checks a Job's pod and containers as a restrictive admission policy
// (Pod Security "restricted", plus limits and deadlines) would.
func checkJob(t *testing.T, r rendered, j *batchv1.Job, image string) {
	t.Helper()
	if d := j.Spec.ActiveDeadlineSeconds; d == nil || *d <= 0 {
		t.Errorf("Job %s has no activeDeadlineSeconds: a stuck pod would hold its node forever", j.Name)
	}
	if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
		t.Errorf("Job %s retries failed pods: a retried shard records its levels late", j.Name)
	}
	pod := j.Spec.Template.Spec
	if a := pod.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("Job %s mounts the service-account token: ceiling asks nothing of the API", j.Name)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("Job %s shares a host namespace", j.Name)
	}
	for _, v := range pod.Volumes {
		// The volume types Pod Security "restricted" admits that these pods need.
		if v.ConfigMap == nil && v.EmptyDir == nil && v.PersistentVolumeClaim == nil {
			t.Errorf("Job %s: volume %s is neither a ConfigMap, an emptyDir nor a claim", j.Name, v.Name)
		}
	}
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if len(pod.InitContainers) != 0 || len(pod.Containers) == 0 {
		t.Errorf("Job %s has %d init containers, %d containers", j.Name, len(pod.InitContainers), len(pod.Containers))
	}
	for _, c := range pod.Containers {
		where := "Job " + j.Name + " container " + c.Name
		if c.Image != image {
			t.Errorf("%s runs %q, want the kustomization's %s", where, c.Image, image)
		}
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s has no securityContext", where)
			sc = &corev1.SecurityContext{}
		}
		nonRoot := first(sc.RunAsNonRoot, psc.RunAsNonRoot)
		user := first(sc.RunAsUser, psc.RunAsUser)
		seccomp := first(sc.SeccompProfile, psc.SeccompProfile)
		if nonRoot == nil || !*nonRoot {
			t.Errorf("%s: runAsNonRoot is not set", where)
		}
		if user == nil || *user != imageUser {
			t.Errorf("%s: runAsUser %v, want the image's user %d", where, user, imageUser)
		}
		if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", where, seccomp)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation is not false", where)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("%s is privileged", where)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) != 0 {
			t.Errorf("%s: capabilities %+v, want drop [ALL] and none added", where, sc.Capabilities)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: the root file system is writable", where)
		}
		checkResources(t, where, c.Resources)
		checkWritable(t, where, pod, c)
		if e := env(c, "OPENAI_API_KEY"); e != nil && e.Value != "" {
			t.Errorf("%s holds the API key in its manifest: it must come from a Secret", where)
		}
		for _, e := range c.Env {
			if ref := e.ValueFrom; ref != nil && ref.ConfigMapKeyRef != nil {
				cm := r.configMaps[ref.ConfigMapKeyRef.Name]
				if cm == nil || cm.Data[ref.ConfigMapKeyRef.Key] == "" {
					t.Errorf("%s: %s names key %s of ConfigMap %s, which the kustomization does not make", where, e.Name, ref.ConfigMapKeyRef.Key, ref.ConfigMapKeyRef.Name)
				}
			}
		}
	}
}

func first[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// checkResources: memory and CPU requested and limited, the requests within the limits.
func checkResources(t *testing.T, where string, res corev1.ResourceRequirements) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okr := res.Requests[name]
		lim, okl := res.Limits[name]
		if !okr || !okl || req.IsZero() || lim.IsZero() {
			t.Errorf("%s: %s request %v, limit %v: both must be set", where, name, quantity(okr, req), quantity(okl, lim))
		} else if req.Cmp(lim) > 0 {
			t.Errorf("%s: %s request %s above its limit %s", where, name, req.String(), lim.String())
		}
	}
}

func quantity(ok bool, q resource.Quantity) string {
	if !ok {
		return "none"
	}
	return q.String()
}

// checkWritable: with a read-only root, the directory of the container's
// --output (where ceiling also writes FILE.lock and its parts) and /tmp
// ($TMPDIR) must be writable mounts.
func checkWritable(t *testing.T, where string, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	var dirs []string
	for _, a := range c.Args {
		if out, ok := strings.CutPrefix(a, "--output="); ok {
			dirs = append(dirs, path.Dir(out))
		}
	}
	if len(dirs) == 0 {
		t.Errorf("%s names no --output=FILE", where)
	}
	dirs = append(dirs, "/tmp")
	for _, dir := range dirs {
		var m *corev1.VolumeMount
		for i := range c.VolumeMounts {
			if c.VolumeMounts[i].MountPath == dir {
				m = &c.VolumeMounts[i]
			}
		}
		if m == nil || m.ReadOnly || m.SubPath != "" {
			t.Errorf("%s: %s is not a writable volume: %+v", where, dir, m)
			continue
		}
		if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.Name == m.Name && (v.PersistentVolumeClaim != nil || v.EmptyDir != nil)
		}) {
			t.Errorf("%s: %s is mounted from %s, not a claim or an emptyDir", where, dir, m.Name)
		}
	}
}

// claims lists the volume claims a pod mounts, and checks that its ConfigMap
// volumes name ConfigMaps the kustomization makes.
func claims(t *testing.T, r rendered, spec corev1.PodSpec) []string {
	t.Helper()
	var out []string
	for _, v := range spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		}
		if v.ConfigMap != nil && r.configMaps[v.ConfigMap.Name] == nil {
			t.Errorf("volume %s names ConfigMap %q, which the kustomization does not make", v.Name, v.ConfigMap.Name)
		}
	}
	return out
}

// TestDocsNameTheManifests: the cluster recipe of docs/sharding.md (not run:
// it needs a cluster) names the objects and paths these manifests make.
func TestDocsNameTheManifests(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "sharding.md"))
	if err != nil {
		t.Fatal(err)
	}
	job := decodeStrict[batchv1.Job](t, "job.yaml")
	merge := decodeStrict[batchv1.Job](t, "merge-job.yaml")
	pvc := decodeStrict[corev1.PersistentVolumeClaim](t, "pvc.yaml")
	secret := decodeStrict[corev1.Secret](t, "secret.example.yaml")
	var out string
	for _, a := range merge.Spec.Template.Spec.Containers[0].Args {
		if o, ok := strings.CutPrefix(a, "--output="); ok {
			out = path.Base(o)
		}
	}
	for _, want := range []string{
		"kubectl apply -k deploy/kind", "kubectl apply -k deploy/kubernetes",
		"job/" + job.Name, "kubectl patch job " + merge.Name, "job/" + merge.Name,
		"kubectl get pvc " + pvc.Name, "secret generic " + secret.Name + " --from-literal=api-key=",
		"$dir/" + out, "ceiling report " + out,
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/sharding.md does not say %q", want)
		}
	}
}
