package sse

import "strings"

// A fast path for the common chunk: encoding/json spends most of the recorder's CPU
// on reflection and validation of fields it then throws away. fastChunk walks the
// JSON once, reads only choices[].delta.{content,reasoning_content,reasoning,
// tool_calls}, choices[].text and choices[].finish_reason, and skips the rest. Any
// surprise (usage, error, content arrays, escapes in finish_reason, invalid JSON)
// makes it give up, and Decode falls back on encoding/json, so the fast path
// never decides anything the slow one would decide differently (the fuzz test
// checks exactly that).

// fastChunk classifies data; ok is false when the slow path must decide.
func fastChunk(data []byte) (c Chunk, ok bool) {
	p := fastParser{b: data}
	p.ws()
	if !p.eat('{') {
		return c, false
	}
	p.ws()
	if p.eat('}') {
		return c, p.end()
	}
	seen := 0
	for {
		key, ok := p.key()
		if !ok {
			return c, false
		}
		switch string(key) {
		case "choices":
			if seen&1 != 0 || !p.choices(&c) {
				return c, false // a repeated key: encoding/json keeps the last one
			}
			seen |= 1
		case "usage", "error":
			if !p.null() {
				return c, false // real usage or error: the slow path reads them
			}
		default:
			if foldsOnto(key, "choices", "usage", "error") || !p.skip(0) {
				return c, false
			}
		}
		p.ws()
		if p.eat(',') {
			p.ws()
			continue
		}
		if p.eat('}') {
			return c, p.end()
		}
		return c, false
	}
}

type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (p *fastParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// key reads `"name":` and returns the name (a view into the input: `switch
// string(key)` compares it without allocating); names with escapes give up.
func (p *fastParser) key() ([]byte, bool) {
	s, esc, ok := p.str()
	if !ok || esc {
		return nil, false
	}
	p.ws()
	if !p.eat(':') {
		return nil, false
	}
	p.ws()
	return s, true
}

// str reads a string at the cursor. It returns the raw bytes between the quotes,
// and whether it held an escape or a non-ASCII byte.
func (p *fastParser) str() ([]byte, bool, bool) {
	if !p.eat('"') {
		return nil, false, false
	}
	start := p.i
	esc := false
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, esc, true
		case c == '\\':
			esc = true
			if p.i+1 >= len(p.b) {
				return nil, false, false
			}
			switch p.b[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.b) || !isHex4(p.b[p.i+2:p.i+6]) {
					return nil, false, false
				}
				p.i += 6
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false // control characters are invalid in JSON strings
		case c >= 0x80:
			// encoding/json accepts any bytes here (it replaces invalid UTF-8), but a
			// non-ASCII key could case-fold onto a known one: report it as escaped.
			esc = true
			p.i++
		default:
			p.i++
		}
	}
	return nil, false, false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// skipStr skips a string, reporting whether it was empty.
func (p *fastParser) skipStr() (empty, ok bool) {
	start := p.i
	_, _, ok = p.str()
	return p.i-start == 2, ok
}

func (p *fastParser) null() bool {
	if p.i+4 <= len(p.b) && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// skip skips any JSON value; depth bounds nesting like encoding/json does.
func (p *fastParser) skip(depth int) bool {
	if depth > 100 || p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, ok := p.skipStr()
		return ok
	case c == '{':
		p.i++
		p.ws()
		if p.eat('}') {
			return true
		}
		for {
			if _, ok := p.key(); !ok {
				return false
			}
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			if p.eat(',') {
				p.ws()
				continue
			}
			return p.eat('}')
		}
	case c == '[':
		p.i++
		p.ws()
		if p.eat(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			if p.eat(',') {
				p.ws()
				continue
			}
			return p.eat(']')
		}
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.null()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return false
}

func (p *fastParser) lit(s string) bool {
	if p.i+len(s) <= len(p.b) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// number skips a JSON number, strictly (no leading zeros, digits required).
func (p *fastParser) number() bool {
	p.eat('-')
	digits := func() int {
		n := 0
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return false
	}
	if p.eat('.') && digits() == 0 {
		return false
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// choices reads the choices array (or null).
func (p *fastParser) choices(c *Chunk) bool {
	if p.null() {
		return true
	}
	if !p.eat('[') {
		return false
	}
	p.ws()
	if p.eat(']') {
		return true
	}
	for {
		if !p.choice(c) {
			return false
		}
		p.ws()
		if p.eat(',') {
			p.ws()
			continue
		}
		return p.eat(']')
	}
}

func (p *fastParser) choice(c *Chunk) bool {
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	seen := 0
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		switch string(key) {
		case "delta":
			if seen&1 != 0 || !p.delta(c) {
				return false
			}
			seen |= 1
		case "text":
			if seen&2 != 0 || !p.textField(&c.Content) {
				return false
			}
			seen |= 2
		case "finish_reason":
			if seen&4 != 0 {
				return false
			}
			seen |= 4
			if !p.null() {
				s, esc, ok := p.str()
				if !ok || esc {
					return false
				}
				if len(s) > 0 {
					c.Finish = finishReason(s)
				}
			}
		default:
			if foldsOnto(key, "delta", "text", "finish_reason") || !p.skip(1) {
				return false
			}
		}
		p.ws()
		if p.eat(',') {
			p.ws()
			continue
		}
		return p.eat('}')
	}
}

// textField reads a string-or-null field, setting *flag when the string is not empty.
func (p *fastParser) textField(flag *bool) bool {
	if p.null() {
		return true
	}
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false // not a string (e.g. a content array): the slow path decides
	}
	empty, ok := p.skipStr()
	if !ok {
		return false
	}
	if !empty {
		*flag = true
	}
	return true
}

func (p *fastParser) delta(c *Chunk) bool {
	if p.null() {
		return true
	}
	if !p.eat('{') {
		return false
	}
	p.ws()
	if p.eat('}') {
		return true
	}
	seen := 0
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		switch string(key) {
		case "content":
			if seen&1 != 0 || !p.textField(&c.Content) {
				return false
			}
			seen |= 1
		case "reasoning_content":
			if seen&2 != 0 || !p.textField(&c.Reasoning) {
				return false
			}
			seen |= 2
		case "reasoning":
			if seen&4 != 0 || !p.textField(&c.Reasoning) {
				return false
			}
			seen |= 4
		case "tool_calls":
			if seen&8 != 0 {
				return false
			}
			seen |= 8
			if !p.null() {
				start := p.i
				if !p.skip(2) {
					return false
				}
				if v := string(p.b[start:p.i]); v != "[]" {
					c.Content = true
				}
			}
		default:
			if foldsOnto(key, "content", "reasoning_content", "reasoning", "tool_calls") || !p.skip(2) {
				return false
			}
		}
		p.ws()
		if p.eat(',') {
			p.ws()
			continue
		}
		return p.eat('}')
	}
}

// foldsOnto reports whether key matches one of names case-insensitively (and is
// not equal to it): encoding/json would treat it as that field.
func foldsOnto(key []byte, names ...string) bool {
	for _, n := range names {
		if len(key) == len(n) && string(key) != n && strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// finishReason interns the usual finish reasons, so that a finish chunk does not
// allocate.
func finishReason(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	}
	return string(b)
}
