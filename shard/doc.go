// Package shard splits one sweep across several load generators started
// independently (for example the pods of a Kubernetes Indexed Job), and merges
// their traces back into one run with a check that they really loaded the server
// together.
//
// The split rules (docs/sharding.md):
//   - a closed-loop level of concurrency C gives shard i of N floor(C/N) workers,
//     plus one for the first C mod N shards, so the shares add up to C exactly;
//   - an open-loop level of rate R gives every shard R/N requests/s: N
//     independent Poisson streams of rate R/N superpose to one Poisson stream of
//     rate R (bursty gamma arrivals do not superpose to a gamma stream: their
//     merged burstiness is lower than asked, which the docs say);
//   - each shard draws its workload from its own seed (Seed), so no two shards
//     send the same prompts, and numbers its requests and workers from its own
//     base, so the merged rows stay unique;
//   - all shards follow one schedule (Schedule): level k starts at the same wall
//     clock time on every shard and lasts the same fixed duration.
package shard
