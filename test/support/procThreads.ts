// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync, readFileSync } from 'node:fs';

/** Fields of /proc/<pid>/task/<tid>/stat, counted from 1 as proc(5) does. */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: split after it.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [stat.slice(0, stat.indexOf(' ')), '(comm)', ...rest];
}

/** Each thread of a process (Linux): its id, niceness (field 19) and session (field 6). */
export function threadsOf(pid: number): { tid: number; nice: number; session: number }[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    try {
      const f = statFields(`/proc/${pid}/task/${tid}/stat`);
      return [{ tid: Number(tid), nice: Number(f[18]), session: Number(f[5]) }];
    } catch {
      return []; // A thread that ended meanwhile.
    }
  });
}
