package enginetest

import "net/http"

// The HTTP side of the step schedulers' prefix caches: the endpoints that drop
// them, and what a test reads of them.

// prefixCaching says whether the step schedulers cache prefixes: by default the
// vLLM (from 0.10, the V1 engine) and SGLang schedulers do, as those engines do.
func (c *Config) prefixCaching() bool {
	switch {
	case c.NoPrefixCaching:
		return false
	case c.Scheduler == SchedulerVLLM:
		return !vllmBefore010(c.Version)
	}
	return c.Scheduler == SchedulerSGLang
}

// resetPrefixCaches asks every engine to drop its cached prefixes; false when one
// refused.
func (s *Server) resetPrefixCaches() bool {
	ok := true
	for _, l := range s.engines {
		l.mu.Lock()
		ok = l.sim.resetPrefixCache() && ok
		l.mu.Unlock()
	}
	return ok
}

// serveResetPrefixCache is vLLM's POST /reset_prefix_cache
// (entrypoints/serve/cache/api_router.py): it answers 200 with an empty body
// whether or not the engine reset ("we currently do not check if the prefix cache
// is successfully reset in the API server"); the engine refuses while blocks are
// in use.
func (s *Server) serveResetPrefixCache(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "AuthenticationError", "Unauthorized")
		return
	}
	s.resetPrefixCaches()
	w.WriteHeader(http.StatusOK)
}

// serveFlushCache is SGLang's /flush_cache (GET or POST, http_server.py): 200
// when the radix cache was reset, 400 when requests are running or waiting, with
// SGLang's text either way.
func (s *Server) serveFlushCache(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "AuthenticationError", "Unauthorized")
		return
	}
	status := http.StatusOK
	if !s.resetPrefixCaches() {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n"))
}
