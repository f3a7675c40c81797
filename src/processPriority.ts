// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * The niceness of the processes that do a node's media (the media processes and the embedded
 * LiveKit server), below the API process's 0: when the node's share of the cores is short, as
 * while a burst's avatars start, the API's accept loop and front door run first, so that
 * `/healthz` and the refusals of a burst answer promptly; the media take what the API leaves,
 * which outside a burst is nearly all of it (the API's share of a node's CPU is small).
 *
 * The children run in the API process's session (not `detached`): on a Linux kernel with
 * autogroups a session is a scheduling group, CPU is shared between groups first and the
 * niceness of threads counts only within a group. So the node as a whole keeps its share of a
 * machine it shares, and inside it the API comes first. (In a session of its own, a child at
 * nice 0 weighed as much as the API process and everything of its session together; and a
 * niced group of its own would lose against everything else on the machine.) In a CPU cgroup (a
 * container, a systemd service) the kernel does not group by session, and the same holds within
 * the cgroup. docs/health-and-bursts.md#the-api-first has the figures.
 */
export const MEDIA_NICE = 10;

/**
 * Puts every thread of process `pid` (a child this process started) `by` below this process's
 * own priority (its niceness this process's plus `by`, at most 19).
 * Linux's niceness is per thread, and threads started later inherit their creator's: call it
 * once the child is spawned and again once it has started its threads. Returns how many threads
 * were set; never throws (a platform that refuses leaves the child as it was).
 */
export function lowerProcessPriority(pid: number, by: number): number {
  let tids: number[];
  try {
    tids = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    // Not Linux: the platform's per-process priority.
    tids = [pid];
  }
  const nice = Math.min(19, getPriority() + by);
  let set = 0;
  for (const tid of tids) {
    try {
      setPriority(tid, nice);
      set++;
    } catch {
      // A thread that ended meanwhile, or a platform that refuses.
    }
  }
  return set;
}
