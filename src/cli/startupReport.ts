// SPDX-License-Identifier: GPL-3.0-or-later
import type { StartupProgress, StartupStep } from '../media/startupProgress.js';

/** A step still running after this long gets a line saying what it is doing. */
const SLOW_STEP_MS = 1_000;

export interface StartupReport {
  progress: StartupProgress;
  /** Prints the closing line with the whole start-up's time. */
  ready(what: string): void;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Human progress lines for a start-up: every step prints one line when it ends (what came out
 * and how long it took), and a step that takes longer than a second also says what it is doing
 * while it runs, so the terminal never sits silent. A step still running when the node is ready
 * (the media processes start behind the banner) says what it is doing then, and ends after it.
 */
export function startupReport(out: (line: string) => void): StartupReport {
  const started = performance.now();
  const pending = new Map<string, { timer: NodeJS.Timeout; said: () => void }>();
  const width = 10;
  const line = (e: StartupStep, text: string) => out(`  ${e.step.padEnd(width)}${text}`);
  const progress: StartupProgress = (e) => {
    if (e.phase === 'started') {
      const said = () => {
        pending.delete(e.step);
        line(e, `${e.detail ?? 'working'}…`);
      };
      const timer = setTimeout(said, SLOW_STEP_MS);
      timer.unref();
      pending.set(e.step, { timer, said });
      return;
    }
    clearTimeout(pending.get(e.step)?.timer);
    pending.delete(e.step);
    const took = e.ms === undefined ? '' : ` in ${seconds(e.ms)}`;
    line(e, `${e.detail ?? 'ready'}${took}`);
  };
  return {
    progress,
    ready: (what) => {
      // What still goes on behind the banner (the media processes) says so before it.
      for (const { timer, said } of [...pending.values()]) {
        clearTimeout(timer);
        said();
      }
      out(`${what} ready in ${seconds(performance.now() - started)}.`);
    },
  };
}
