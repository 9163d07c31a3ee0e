package enginetest_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// A recorder test starts an engine, sends it requests, and compares what it measured
// with the engine's log.
func Example() {
	s := enginetest.New(enginetest.Config{
		Model:    "tiny",
		TTFT:     20 * time.Millisecond,
		TokenGap: 5 * time.Millisecond,
		Slots:    4,
		Kind:     "vllm",
		Fault: func(i int64) enginetest.Fault {
			if i == 1 {
				return enginetest.FaultResetMidStream // the second request breaks
			}
			return enginetest.FaultNone
		},
	})
	defer s.Close()

	body := `{"model":"tiny","messages":[{"role":"user","content":"hello there"}],
		"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`
	resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	events := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			events++
		}
	}
	resp.Body.Close()

	l := s.Log()[0]
	fmt.Println("events:", events)
	fmt.Println("prompt, output tokens:", l.PromptTokens, l.OutputTokens)
	fmt.Println("completed:", l.Completed, l.FinishReason)
	fmt.Println("TTFT at least 20ms:", l.FirstTokenSent.Sub(l.SlotAcquired) >= 20*time.Millisecond)
	// Output:
	// events: 7
	// prompt, output tokens: 2 3
	// completed: true length
	// TTFT at least 20ms: true
}
