// Package kubernetes holds the manifests that record one sweep from several load
// generators as a Kubernetes Indexed Job (docs/sharding.md); its test decodes
// them strictly into the Kubernetes API types and checks that they run the
// ceiling commands they name.
package kubernetes
