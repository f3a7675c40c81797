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
 * while it runs, so the terminal never sits silent.
 */
export function startupReport(out: (line: string) => void): StartupReport {
  const started = performance.now();
  const pending = new Map<string, NodeJS.Timeout>();
  const width = 10;
  const line = (e: StartupStep, text: string) => out(`  ${e.step.padEnd(width)}${text}`);
  const progress: StartupProgress = (e) => {
    if (e.phase === 'started') {
      const timer = setTimeout(() => line(e, `${e.detail ?? 'working'}…`), SLOW_STEP_MS);
      timer.unref();
      pending.set(e.step, timer);
      return;
    }
    clearTimeout(pending.get(e.step));
    pending.delete(e.step);
    const took = e.ms === undefined ? '' : ` in ${seconds(e.ms)}`;
    line(e, `${e.detail ?? 'ready'}${took}`);
  };
  return {
    progress,
    ready: (what) => {
      for (const timer of pending.values()) clearTimeout(timer);
      pending.clear();
      out(`${what} ready in ${seconds(performance.now() - started)}.`);
    },
  };
}
