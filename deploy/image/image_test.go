package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// TestImageArchive builds the image as `make image` does (cmd/ceiling compiled
// once, into a temporary directory) and reads the archive back as `docker load`
// would: the tag in manifest.json, the config (entrypoint, non-root user,
// labels, CA path) and the files of its layer. It then runs the binary from the
// layer: as root (CI), chrooted into the image's file system as user 65532,
// which is what a container runtime does with it; otherwise directly.
func TestImageArchive(t *testing.T) {
	version, err := versionFromSource(filepath.Join("..", "..", "cmd", "ceiling"))
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	out := filepath.Join(t.TempDir(), "ceiling-image.tar")
	var said bytes.Buffer
	s := spec{arch: runtime.GOARCH, revision: "0123456789abcdef", created: created, source: source}
	if err := build(context.Background(), s, out, &said); err != nil {
		t.Fatal(err)
	}
	t.Log(strings.TrimSpace(said.String()))

	// The default tag is ceiling:VERSION; ImageFromPath finds the image by it in
	// manifest.json's RepoTags, as docker load and kind load tag what they load.
	tag, err := name.NewTag("ceiling:" + version)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatalf("the archive holds no image tagged %s: %v", tag, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cfg, version, created)

	root := extract(t, img)
	ca, err := os.ReadFile(filepath.Join(root, caPath))
	if err != nil {
		t.Fatalf("the image has no CA bundle at %s (SSL_CERT_FILE): %v", caPath, err)
	}
	if n := countCerts(t, ca); n < 100 {
		t.Errorf("the CA bundle holds %d roots; Mozilla's hold well over 100", n)
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	if err != nil || !strings.Contains(string(passwd), ":65532:65532:") {
		t.Errorf("/etc/passwd does not name user 65532: %q, %v", passwd, err)
	}

	bin := filepath.Join(root, cfg.Config.Entrypoint[0])
	checkStatic(t, bin)
	if runtime.GOOS != "linux" {
		t.Skipf("the image's binary is for linux, this is %s: not run", runtime.GOOS)
	}
	got := runImage(t, root, cfg, "--version")
	if want := "ceiling " + version + "\n"; got != want {
		t.Errorf("the image's binary says %q to --version, want %q", got, want)
	}
	if got := runImage(t, root, cfg, "--help"); !strings.Contains(got, "Commands:") || !strings.Contains(got, "record") {
		t.Errorf("the image's binary's --help:\n%s", got)
	}
}

func checkConfig(t *testing.T, cfg *v1.ConfigFile, version string, created time.Time) {
	t.Helper()
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if cfg.RootFS.Type != "layers" || len(cfg.RootFS.DiffIDs) != 1 {
		t.Errorf("rootfs %+v: docker load wants type \"layers\" and one diff ID per layer", cfg.RootFS)
	}
	c := cfg.Config
	if len(c.Entrypoint) != 1 || path.Base(c.Entrypoint[0]) != "ceiling" || !path.IsAbs(c.Entrypoint[0]) {
		t.Errorf("entrypoint %q, want the absolute path of the ceiling binary alone (the manifests pass only args)", c.Entrypoint)
	}
	if len(c.Cmd) != 0 {
		t.Errorf("cmd %q: ceiling without a command prints its usage and fails, so the image must have none", c.Cmd)
	}
	uid, gid, ok := strings.Cut(c.User, ":")
	u, err1 := strconv.Atoi(uid)
	g, err2 := strconv.Atoi(gid)
	if !ok || err1 != nil || err2 != nil || u == 0 || g == 0 {
		t.Errorf("user %q, want a numeric non-root UID:GID (runAsNonRoot can check only a number)", c.User)
	} else if u != userID {
		t.Errorf("user %d, but the manifests' runAsUser is %d", u, userID)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE="+caPath) {
		t.Errorf("env %q lacks SSL_CERT_FILE=%s", c.Env, caPath)
	}
	want := map[string]string{
		"org.opencontainers.image.title":    "ceiling",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.revision": "0123456789abcdef",
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
		"org.opencontainers.image.licenses": "MIT",
	}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if !cfg.Created.Time.Equal(created) {
		t.Errorf("created %v, want %v", cfg.Created.Time, created)
	}
}

// extract writes the image's file system into a directory: regular files and
// directories with their modes (the only kinds the image has).
func extract(t *testing.T, img v1.Image) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil { // so that user 65532 may enter it
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
			if err == nil {
				err = os.Chmod(dst, h.FileInfo().Mode())
			}
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(dst, b, h.FileInfo().Mode().Perm())
			}
		default:
			t.Errorf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dst, h.Uid, h.Gid); err != nil && os.Geteuid() == 0 {
			t.Fatal(err)
		}
	}
	return root
}

func countCerts(t *testing.T, b []byte) int {
	t.Helper()
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return n
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Errorf("root %d of the CA bundle: %v", n, err)
		}
		n++
	}
}

// checkStatic fails when the binary asks for a dynamic loader: the image has none.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the entrypoint %s is not an ELF binary: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked: the empty base has no loader for it", bin)
		}
	}
}

// runImage runs the image's entrypoint with args and its environment, and
// returns its standard output.
func runImage(t *testing.T, root string, cfg *v1.ConfigFile, args ...string) string {
	t.Helper()
	cmd := exec.Command(cfg.Config.Entrypoint[0], args...)
	cmd.Env = cfg.Config.Env
	if os.Geteuid() == 0 {
		u, _ := strconv.Atoi(strings.Split(cfg.Config.User, ":")[0])
		g, _ := strconv.Atoi(strings.Split(cfg.Config.User, ":")[1])
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uint32(u), Gid: uint32(g)}}
	} else {
		t.Logf("not root: running %s outside the image's file system, as this user", cfg.Config.Entrypoint[0])
		cmd.Path = filepath.Join(root, cfg.Config.Entrypoint[0])
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the image's %s %v: %v\n%s", cfg.Config.Entrypoint[0], args, err, stderr.String())
	}
	return stdout.String()
}

// TestManifestsRunThisImage: the kustomization sets the image that `make image`
// tags by default, so that the recipe of docs/sharding.md runs what it loaded.
func TestManifestsRunThisImage(t *testing.T) {
	version, err := versionFromSource(filepath.Join("..", "..", "cmd", "ceiling"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "kubernetes", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Images) != 1 || k.Images[0].NewName != "ceiling" || k.Images[0].NewTag != version {
		t.Errorf("the kustomization's images are %+v; `make image` tags ceiling:%s", k.Images, version)
	}
}

func TestBuildRefuses(t *testing.T) {
	for _, c := range []struct{ tag, want string }{
		{"ceiling", "names no version"},
		{"ceiling:latest", "names no version"},
		{"Ceiling Image:1", "tag \"Ceiling Image:1\""},
	} {
		s := spec{tag: c.tag, version: "1.0.0", arch: runtime.GOARCH, created: time.Now()}
		err := build(context.Background(), s, filepath.Join(t.TempDir(), "x.tar"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tag %q: %v, want an error saying %q", c.tag, err, c.want)
		}
	}
}

func TestVersionFromSource(t *testing.T) {
	for _, c := range []struct{ src, want, err string }{
		{"package main\n\nvar version = \"1.2.3\"\n", "1.2.3", ""},
		{"package main\n\nvar (\n\tx = 1\n\tversion = `2.0`\n)\n", "2.0", ""},
		{"package main\n\nvar version = compute()\n", "", "not set to a string literal"},
		{"package main\n\nconst version = \"1\"\n", "", "no package-level version variable"},
		{"package main\n\nvar version = \n", "", "reading the version"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := versionFromSource(dir)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %q, %v; want %q, error %q", c.src, got, err, c.want, c.err)
		}
	}
}

func TestCreationTime(t *testing.T) {
	for _, c := range []struct{ flag, epoch, want, err string }{
		{"2026-12-02T10:00:00+01:00", "1", "2026-12-02T09:00:00Z", ""},
		{"", "1764669600", "2025-12-02T10:00:00Z", ""},
		{"yesterday", "", "", "--created \"yesterday\""},
		{"", "soon", "", "SOURCE_DATE_EPOCH \"soon\""},
	} {
		got, err := creationTime(c.flag, c.epoch)
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) ||
			(c.want != "" && got.Format(time.RFC3339) != c.want) {
			t.Errorf("creationTime(%q, %q) = %v, %v; want %s, error %q", c.flag, c.epoch, got, err, c.want, c.err)
		}
	}
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), nil, io.Discard, &stderr, func(string) string { return "" }); code != 2 || !strings.Contains(stderr.String(), "-o FILE") {
		t.Errorf("no -o: exit %d, %q; want 2 and the usage", code, stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"-o", "x.tar", "--created", "now"}, io.Discard, &stderr, func(string) string { return "" }); code != 2 || !strings.Contains(stderr.String(), "--created") {
		t.Errorf("bad --created: exit %d, %q; want 2 naming --created", code, stderr.String())
	}
}
