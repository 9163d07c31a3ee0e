// Command image builds the container image that the manifests of
// deploy/kubernetes run, with neither a container daemon nor a registry: it
// compiles cmd/ceiling as a static binary (CGO_ENABLED=0) for linux and lays it,
// a CA bundle and a non-root user on an empty base with go-containerregistry,
// then writes the image as a docker-style archive (manifest.json with the tag)
// that `docker load`, `podman load` and `kind load image-archive` accept.
//
//	go run ./deploy/image -o ceiling-image.tar            # tag ceiling:VERSION
//	go run ./deploy/image -o ceiling-image.tar --tag registry.example/ceiling:1.2.3 --version 1.2.3
//
// VERSION is cmd/ceiling's own (the `version` variable of cmd/ceiling/main.go,
// what `ceiling --version` prints) unless --version is given, in which case the
// binary is linked with -X main.version so that it reports the image's version.
// `make image` runs this command. docs/sharding.md walks through loading the
// archive into a kind cluster.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// source is where the image's code lives (org.opencontainers.image.source).
const source = "https://github.com/ceiling-llm/ceiling"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("image", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.StringP("output", "o", "", "the image archive to write (required)")
	tag := fs.String("tag", "", "the image's name and tag (default ceiling:VERSION)")
	version := fs.String("version", "", "the version the binary reports and the image is labelled with (default: cmd/ceiling's)")
	arch := fs.String("arch", runtime.GOARCH, "the image's CPU architecture (GOARCH)")
	revision := fs.String("revision", "", "the source revision label (default: git rev-parse HEAD, with -dirty when the tree has changes)")
	created := fs.String("created", "", "the creation time, RFC 3339 (default: $SOURCE_DATE_EPOCH, else now)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: go run ./deploy/image -o FILE [--tag NAME:TAG] [--version V] [--arch GOARCH]")
		return 2
	}
	when, err := creationTime(*created, getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		fmt.Fprintln(stderr, "image:", err)
		return 2
	}
	spec := spec{version: *version, tag: *tag, arch: *arch, revision: *revision, created: when, source: source}
	if err := build(ctx, spec, *out, stdout); err != nil {
		fmt.Fprintln(stderr, "image:", err)
		return 1
	}
	return 0
}

// creationTime is --created, else SOURCE_DATE_EPOCH (the reproducible-builds
// convention: seconds since 1970), else now.
func creationTime(flag, epoch string) (time.Time, error) {
	switch {
	case flag != "":
		t, err := time.Parse(time.RFC3339, flag)
		if err != nil {
			return time.Time{}, fmt.Errorf("--created %q is not an RFC 3339 time: %w", flag, err)
		}
		return t.UTC(), nil
	case epoch != "":
		s, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a count of seconds: %w", epoch, err)
		}
		return time.Unix(s, 0).UTC(), nil
	}
	return time.Now().UTC().Truncate(time.Second), nil
}
