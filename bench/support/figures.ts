// SPDX-License-Identifier: GPL-3.0-or-later
// What every benchmark reports, besides its printed table: its figures as plain numbers, so that
// `npm run bench` can write one JSON object of the whole run (BENCH_JSON=file) for a script to
// compare two runs. bench/run.js names the file each benchmark appends to.

/** `npm run bench -- --quick`: one round of each latency figure, short density runs. */
export const QUICK = process.env.BENCH_QUICK === '1';

/** Rounds of each latency figure: BENCH_ROUNDS, 1 when quick, else `full`. */
export function rounds(full = 5): number {
  if (process.env.BENCH_ROUNDS) return Number(process.env.BENCH_ROUNDS);
  return QUICK ? 1 : full;
}

/** The middle value of a sample (the upper one of the two middles when its size is even). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
}

/** Median and 95th percentile of a sample (nearest rank). */
export function summary(xs: number[]): { median: number; p95: number; n: number } {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { median: at(0.5) ?? NaN, p95: at(0.95) ?? NaN, n: xs.length };
}

/** Records `figures` under `section` for the run's JSON (a no-op outside bench/run.js). */
export async function recordFigures(section: string, figures: unknown): Promise<void> {
  const file = process.env.BENCH_FIGURES_FILE;
  if (!file) return;
  const { appendFileSync } = await import('node:fs');
  appendFileSync(file, `${JSON.stringify({ section, figures })}\n`);
}
