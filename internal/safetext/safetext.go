// Package safetext makes text that a server (or a file) supplied safe to show in
// a terminal, a log or a file: the one sanitiser every such string goes through.
//
// A model id, an error body or a version string is the server's to choose; shown
// raw, an OSC sequence sets the terminal's title, a CSI sequence clears the
// screen, a carriage return overwrites the line before it and a right-to-left
// override (U+202E) makes "exe.txt" read as "txt.exe". Every character that
// controls rather than prints is replaced by a visible escape in Go's notation
// (\x1b, \r, \u202e), so what the server sent stays readable and nothing acts on
// the terminal. The escapes are printable ASCII, so sanitising twice changes
// nothing more.
package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line returns s for one line of output: a tab or a line break (\n, \r) becomes a
// space, every other control character (see Text) a visible escape.
func Line(s string) string { return clean(s, true) }

// Text returns s for output that may span lines: line breaks (\n, and \r\n as \n)
// and tabs are kept; every other C0 control (a lone carriage return included), DEL, every C1 control
// (U+0080–U+009F), the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069) and the line and paragraph separators
// (U+2028, U+2029) become visible escapes, and invalid UTF-8 becomes U+FFFD.
func Text(s string) string { return clean(s, false) }

func clean(s string, oneLine bool) string {
	if isClean(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			if oneLine {
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		case r == '\r' && oneLine:
			b.WriteByte(' ')
		case r == '\r' && strings.HasPrefix(s[i:], "\n"):
			// CRLF is a line break: its LF is written next.
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isClean says whether clean would return s unchanged (the common case, without
// building a copy).
func isClean(s string, oneLine bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r == '\n' || r == '\t':
			if oneLine {
				return false
			}
		case r < 0x20 || r == 0x7f || isControl(r):
			return false
		}
	}
	return true
}

// isControl says whether r, above ASCII, controls a terminal or the direction of
// the text rather than printing.
func isControl(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1: CSI (0x9b) and OSC (0x9d) in 8-bit terminals
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // Arabic letter mark, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // isolates
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// Escaped returns b with every control character but tab, line feed and carriage
// return (C0, DEL, C1, the bidi controls, U+2028, U+2029) written as a \uXXXX
// escape: for JSON and HTML, where the raw character would act on a terminal that
// shows the file or reorder the text a browser shows. Inside a JSON or JavaScript
// string the escape decodes to the same character, so the data is unchanged
// (encoding/json leaves DEL, C1 and the bidi controls raw); in HTML text it shows
// as written.
func Escaped(b []byte) []byte {
	if !needsEscape(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if escapedRune(r, size) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

func needsEscape(b []byte) bool {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if escapedRune(r, size) {
			return true
		}
		i += size
	}
	return false
}

// escapedRune says whether Escaped writes r as an escape (an invalid byte is
// left as it is: JSON and HTML writers produce none).
func escapedRune(r rune, size int) bool {
	if r == utf8.RuneError && size == 1 {
		return false
	}
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || isControl(r)
}
