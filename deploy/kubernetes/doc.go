// Package kubernetes holds the manifests that record one sweep from several load
// generators as a Kubernetes Indexed Job and merge it (docs/sharding.md), with
// the kustomization that sets the image, server, shard count and start time in
// one place (deploy/kind adapts it to a kind cluster). Its test renders the
// kustomizations as `kubectl apply -k` does, decodes every object strictly into
// the Kubernetes API types, and checks the settings reach the Jobs and every pod
// and container is locked down (non-root, read-only root, no capabilities,
// limits, deadlines); cmd/ceiling's TestKubernetesJobRuns runs their commands.
package kubernetes
