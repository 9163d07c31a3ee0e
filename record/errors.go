package record

import (
	"errors"
	"fmt"

	"github.com/ceiling-llm/ceiling/record/internal/client"
)

// ErrServerGone is returned (wrapped) when the server stopped answering mid-sweep.
// The trace is still written with every row recorded.
var ErrServerGone = errors.New("the server stopped answering")

// ErrLevelFailed is returned (wrapped) when every request of a level failed and
// the sweep stopped there. The trace is still written, the failed level included.
var ErrLevelFailed = errors.New("every request of a level failed")

// ErrClientFileLimit is returned (wrapped) when the recorder itself ran out of file
// descriptors mid-sweep (an open-loop level with more requests in flight than
// ulimit -n allows). The trace is still written with every row recorded.
var ErrClientFileLimit = errors.New("the recorder ran out of file descriptors (not a server failure)")

// ErrInterrupted is returned when the sweep was interrupted (Ctrl-C); the trace is
// complete up to the interruption.
var ErrInterrupted = errors.New("interrupted")

// ErrNoCeiling is returned when a ceiling search ends with no level that passed its
// criteria: there is no ceiling to state. The levels it ran are kept in the trace.
var ErrNoCeiling = errors.New("the search found no level that passes its criteria")

// ErrUnauthorized is returned (wrapped) when the server refuses the credentials.
var ErrUnauthorized = client.ErrUnauthorized

// ErrUnreachable is returned (wrapped) when the server cannot be contacted at all.
var ErrUnreachable = client.ErrUnreachable

// errModelNotFound and friends carry the pre-flight failures.
var errModelNotFound = errors.New("model not found")

// sealError is a part of a level that could not be written (disk full, read-only
// directory): the level is not done.
type sealError struct {
	level int
	err   error
}

func (e *sealError) Error() string { return fmt.Sprintf("writing level %d: %v", e.level, e.err) }
func (e *sealError) Unwrap() error { return e.err }

// errSimulatedCrash is returned by the crashAfterLevels test hook.
var errSimulatedCrash = errors.New("simulated crash")
