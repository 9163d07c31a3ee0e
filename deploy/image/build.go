package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// cmdPackage is the package whose binary the image runs.
const cmdPackage = "github.com/ceiling-llm/ceiling/cmd/ceiling"

// spec is what the image is labelled with; empty version, tag and revision are
// filled in by build.
type spec struct {
	version, tag, arch, revision, source string
	created                              time.Time
}

// build compiles cmd/ceiling, assembles the image and writes its archive to out.
func build(ctx context.Context, s spec, out string, stdout io.Writer) error {
	dir, err := command(ctx, "", "go", "list", "-f", "{{.Dir}}", cmdPackage)
	if err != nil {
		return fmt.Errorf("finding %s: %w", cmdPackage, err)
	}
	if s.version == "" {
		if s.version, err = versionFromSource(dir); err != nil {
			return err
		}
	}
	if s.tag == "" {
		s.tag = "ceiling:" + s.version
	}
	tag, err := name.NewTag(s.tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", s.tag, err)
	}
	if tag.TagStr() == name.DefaultTag {
		// A cluster caches an image by its tag: :latest would run whichever
		// build a node pulled first, and pulls it again on every start.
		return fmt.Errorf("tag %q names no version: give it one, e.g. ceiling:%s", s.tag, s.version)
	}
	if s.revision == "" {
		s.revision = gitRevision(ctx, dir)
	}

	tmp, err := os.MkdirTemp("", "ceiling-image-")
	if err != nil {
		return fmt.Errorf("making a build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "ceiling")
	if err := buildBinary(ctx, s.arch, s.version, bin); err != nil {
		return err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("reading the built binary: %w", err)
	}
	img, err := assemble(binary, s)
	if err != nil {
		return err
	}

	// Written beside out and renamed, so that a failed build leaves no archive
	// that a later `kind load` would take for a whole one.
	part := out + ".part"
	if err := tarball.WriteToFile(part, tag, img); err != nil {
		os.Remove(part)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(part, out); err != nil {
		os.Remove(part)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s (linux/%s, ceiling %s, revision %s, %.1f MiB)\n",
		out, s.tag, s.arch, s.version, orNone(s.revision), float64(fi.Size())/(1<<20))
	return nil
}

// buildBinary compiles cmd/ceiling for linux/arch into dst: static
// (CGO_ENABLED=0, so the empty base needs no C library), without the build
// machine's paths (-trimpath) or debug tables (-s -w), reporting version.
func buildBinary(ctx context.Context, arch, version, dst string) error {
	ldflags := "-s -w -X main.version=" + version
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", dst, cmdPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s for linux/%s: %w\n%s", cmdPackage, arch, err, stderr.String())
	}
	return nil
}

// versionFromSource reads the version cmd/ceiling reports when it is built
// without -X: the string its package-level `version` variable is set to.
func versionFromSource(dir string) (string, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	for _, file := range matches {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return "", fmt.Errorf("reading the version of %s: %w", cmdPackage, err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				v := sp.(*ast.ValueSpec)
				for i, n := range v.Names {
					if n.Name != "version" || i >= len(v.Values) {
						continue
					}
					lit, ok := v.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return "", fmt.Errorf("%s: version is not set to a string literal: pass --version", fset.Position(n.Pos()))
					}
					return strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return "", fmt.Errorf("%s declares no package-level version variable: pass --version", dir)
}

// gitRevision is the commit of the checkout that holds dir, with -dirty when
// the tree has uncommitted changes; empty outside a git checkout.
func gitRevision(ctx context.Context, dir string) string {
	rev, err := command(ctx, dir, "git", "rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	if changes, err := command(ctx, dir, "git", "status", "--porcelain", "--untracked-files=no"); err == nil && changes != "" {
		rev += "-dirty"
	}
	return rev
}

// command runs a program and returns its trimmed standard output.
func command(ctx context.Context, dir, prog string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
