//go:build race

package enginetest

// raceEnabled shrinks load tests under the race detector, which allows at most 8128
// live goroutines.
const raceEnabled = true
