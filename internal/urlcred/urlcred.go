// Package urlcred strips credentials from URLs before they are stored, printed or
// put in an error: the one place that knows how, for the recorder and the CLI.
package urlcred

import (
	"net/url"
	"strings"
)

// Strip returns raw without any user:password@ part and without its query and
// fragment (which may hold a token), for storing and printing. Unparseable input is
// reduced to its scheme and host as well as possible.
func Strip(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			if j := strings.Index(raw, "://"); j >= 0 && j < i {
				return raw[:j+3] + raw[i+1:]
			}
			return raw[i+1:]
		}
		return raw
	}
	u.User = nil
	return u.String()
}
