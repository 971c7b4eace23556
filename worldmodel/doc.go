// Package worldmodel holds the world models of the three policy families,
// and checks any policy of a family against them with package modelcheck:
// every reachable world, every invariant, the shortest counterexample.
//
// A world is N instances of a policy together with what the runtime keeps
// beside them and what the environment does:
//
//   - turn ([TurnModel]): tasks of one process taking turns at one process
//     lock, as package plock drives the turn policy, with other processes
//     holding the lock, aborts and failures;
//   - lane ([LaneModel]): keys of one lanes value under a slot pool and a
//     bounded queue, as package lanes drives the lane policy, with wakes,
//     cancels, timeouts and Close;
//   - lease ([LeaseModel]): holders of one key in several processes, as
//     package lease drives the lease policy, with a repository that
//     compares revisions, a per-key fence, crashes, pauses past the TTL,
//     clocks that lag and repository failures.
//
// [CheckPolicy] checks a shipped or a custom policy at its family's default
// bounds; [CheckSpec] parses, validates and checks a spec file, naming its
// file and line on error. `collab check` and `make modelcheck` call them.
//
// The runtime packages never import this package: it is the checker's, and
// it links the spec parser and the model checker.
package worldmodel
