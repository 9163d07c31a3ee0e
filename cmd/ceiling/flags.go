package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// help is what `ceiling <command> --help` prints: a usage line and description, then
// the flags, then examples.
type help struct {
	name    string // the subcommand
	head    string // "Usage: ..." and a description
	example string // "Example:\n  ..."
}

func (h help) print(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, strings.TrimRight(h.head, "\n"), "\n\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, "\n", strings.TrimLeft(h.example, "\n"))
}

// parse parses a subcommand's flags the same way for every subcommand: --help prints
// the help to stdout (exit 0); a bad flag prints one line and a hint to stderr (exit 2,
// without pflag's wall of defaults). ok is false when the command should stop with code.
func (h help) parse(e env, fs *pflag.FlagSet, args []string) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			h.print(e.stdout, fs)
			return exitOK, false
		}
		return h.usageError(e, err.Error()), false
	}
	return exitOK, true
}

// usageError reports a usage mistake and returns exitUsage.
func (h help) usageError(e env, msg string) int {
	fmt.Fprintf(e.stderr, "ceiling %s: %s\nRun 'ceiling %s --help' for the flags and an example.\n", h.name, msg, h.name)
	return exitUsage
}
