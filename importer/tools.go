package importer

import (
	"bytes"
	"slices"
	"sort"
)

// The tool registry: each tool's file registers, in one function returning its
// tool, its --from name, how its files are told apart, how they are read and the
// differences from its own summary known to come from its definitions. Adding a
// tool is one file and its line in tools.

// tool is what the importer knows of one benchmark tool.
type tool struct {
	name string // its --from name and Run.Tool
	// detectRank orders detection (lowest first): a file with the keys of two
	// tools is the first's, so the specific tools go before the loose ones (vLLM's
	// keys are a subset of SGLang's, so vLLM is last).
	detectRank int
	// detect says whether the beginning of a file is this tool's, or gives an
	// error for a file of the tool that is not the one to import (which names
	// what to import instead).
	detect func(h head) (bool, error)
	// dirEntry says whether a file of this name marks a directory as this tool's
	// results; nil when the tool writes no such file.
	dirEntry func(name string) bool
	// dir says whether a directory is this tool's results, tried after every
	// tool's dirEntry; nil when the tool writes no directory of its own.
	dir func(path string) bool
	// read reads one file (or directory) of the tool into a Run.
	read func(path string) (*Run, error)
	// readSummary reads a file of summary-level points; nil for a tool whose
	// files hold per-request records.
	readSummary func(path string, data []byte) (*Summary, error)
	// readWithRecords says whether path is a summary read with its per-request
	// records, when those are among the files given (given says whether a cleaned
	// path was); nil when the tool has no such pair.
	readWithRecords func(path string, given func(string) bool) bool
	// note explains a difference of ceiling's number from the tool's reference r
	// that is known to come from the tool's definitions; nil or "" when none is.
	note func(r Reference) string
}

// tools lists the tools, in the order --from lists them.
func tools() []tool {
	return []tool{vllmTool(), vllmSweepTool(), sglangTool(), aiperfTool(), guidellmTool(),
		llmperfTool(), inferencePerfTool(), genaiBenchTool(), llmdTool(), inferenceXTool()}
}

// toolsByDetection lists the tools in the order detection tries them.
func toolsByDetection() []tool {
	ts := tools()
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].detectRank < ts[j].detectRank })
	return ts
}

// toolNamed returns the tool --from calls name.
func toolNamed(name string) (tool, bool) {
	for _, t := range tools() {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// Froms lists the values --from accepts.
func Froms() []string {
	out := []string{FromAuto}
	for _, t := range tools() {
		out = append(out, t.name)
	}
	return out
}

// head is the beginning of a file, trimmed, as detection sees it.
type head []byte

// isJSON says whether the file starts as JSON does (an object or a list).
func (h head) isJSON() bool { return len(h) > 0 && (h[0] == '{' || h[0] == '[') }

// isList and isObject say whether the file is a JSON list or object.
func (h head) isList() bool   { return len(h) > 0 && h[0] == '[' }
func (h head) isObject() bool { return len(h) > 0 && h[0] == '{' }

// has says whether any of keys appears as a quoted JSON key or string.
func (h head) has(keys ...string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return bytes.Contains(h, []byte(`"`+k+`"`)) })
}
