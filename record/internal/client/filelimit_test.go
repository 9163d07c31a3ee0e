package client

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 18 item 15: the client running out of file descriptors (EMFILE, ENFILE)
// was reported as the server no longer answering. It is named as the client's
// limit, says how to raise it, and is not counted as a connection failure of the
// server. The dial fails as socket(2) does at the limit.
func TestFileLimitIsTheClients(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE} {
		t.Run(errno.Error(), func(t *testing.T) {
			c, err := New(Options{BaseURL: "http://127.0.0.1:9", Model: "m", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			c.http.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("socket", errno)}
			}
			res := c.Do(context.Background(), Prompt{Text: "hi"}, 4)
			if res.Conn || !res.ClientLimit {
				t.Errorf("Conn %v, ClientLimit %v: want the client's limit, not a server connection failure", res.Conn, res.ClientLimit)
			}
			if !strings.Contains(res.Err, FileLimitText) || !strings.Contains(res.Err, "ulimit -n") {
				t.Errorf("error %q does not name the client's file limit and how to raise it", res.Err)
			}
		})
	}
}
