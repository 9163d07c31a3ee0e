package main

import "github.com/ceiling-llm/ceiling/internal/safetext"

// errText is an error's text as printed to the terminal: errors and warnings may
// quote a server (an error body, a model id) or a file (a trace's metadata, another
// tool's result), so every character that would act on the terminal becomes a
// visible escape (safetext.Text); the message's own line breaks are kept.
func errText(err error) string { return safetext.Text(err.Error()) }
