package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image's layout. The user is numeric so that a pod's runAsNonRoot can be
// checked by the kubelet without reading /etc/passwd; 65532 is distroless'
// "nonroot", which the manifests' runAsUser repeats.
const (
	binaryPath = "/usr/local/bin/ceiling"
	caPath     = "/etc/ssl/certs/ca-certificates.crt"
	userID     = 65532
)

// assemble lays binary, the CA bundle and the non-root user on an empty base,
// as one layer, and labels the image with s.
func assemble(binary []byte, s spec) (v1.Image, error) {
	ca, err := caBundle()
	if err != nil {
		return nil, err
	}
	files, err := rootFS(binary, ca, s.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("making the image layer: %w", err)
	}
	user := fmt.Sprintf("%d:%d", userID, userID)
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           "linux",
		Architecture: s.arch,
		Created:      v1.Time{Time: s.created},
		// docker load refuses any other type; the diff IDs are added with the layer.
		RootFS: v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{binaryPath},
			User:       user,
			WorkingDir: "/",
			Env: []string{
				"PATH=/usr/local/bin",
				// Go finds the bundle at this path anyway; saying so lets a user
				// who mounts another bundle see where to point it.
				"SSL_CERT_FILE=" + caPath,
			},
			Labels: labels(s),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("configuring the image: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: s.created},
			CreatedBy: "go run ./deploy/image: " + binaryPath + ", " + caPath + ", user " + user,
			Comment:   "ceiling " + s.version,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the image layer: %w", err)
	}
	return img, nil
}

// labels are the OCI annotations of the image (image-spec annotations.md),
// without those that have no value.
func labels(s spec) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       "ceiling",
		"org.opencontainers.image.description": "Finds the realistic concurrency ceiling of an LLM deployment",
		"org.opencontainers.image.version":     s.version,
		"org.opencontainers.image.source":      s.source,
		"org.opencontainers.image.url":         s.source,
		"org.opencontainers.image.licenses":    "MIT",
		"org.opencontainers.image.created":     s.created.Format(time.RFC3339),
		"org.opencontainers.image.revision":    s.revision,
	}
	for k, v := range l {
		if v == "" {
			delete(l, k)
		}
	}
	return l
}

// rootFS is the layer's tar: the binary, the CA bundle, /etc/passwd and
// /etc/group naming the user (for tools that look it up), its home and a /tmp,
// every entry stamped with the creation time so that one input gives one layer.
func rootFS(binary, ca []byte, mtime time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", userID, userID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", userID)
	entries := []struct {
		name     string
		mode     int64
		uid      int
		contents []byte
		dir      bool
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, contents: []byte(passwd)},
		{name: "etc/group", mode: 0o644, contents: []byte(group)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: caPath[1:], mode: 0o644, contents: ca},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: userID, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: binaryPath[1:], mode: 0o755, contents: binary},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime,
			Typeflag: tar.TypeReg, Size: int64(len(e.contents)), Format: tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("writing %s into the layer: %w", e.name, err)
		}
		if _, err := tw.Write(e.contents); err != nil {
			return nil, fmt.Errorf("writing %s into the layer: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}
