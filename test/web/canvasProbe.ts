// SPDX-License-Identifier: GPL-3.0-or-later
// What the browser tests of the product pages (the playground, the mint-proxy page) measure of an
// avatar drawn in the browser (`client` mode): the probe (browser/canvasProbe.ts) is bundled and
// injected into the page; the mouth it measures on the canvas must open while the voice the page
// plays is loud, and be shut before and after.
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import type { CanvasProbe, ProbeSample } from './browser/canvasProbe.js';

let bundled: Promise<string> | undefined;

/** The probe's script, one classic script (an IIFE). */
function probeScript(): Promise<string> {
  bundled ??= build({
    entryPoints: ['test/web/browser/canvasProbe.ts'],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['chrome105'],
    write: false,
    logLevel: 'silent',
  }).then((r) => r.outputFiles[0]!.text);
  return bundled;
}

const probeSamples = (page: Page): Promise<ProbeSample[]> =>
  page.evaluate(() =>
    (window as unknown as { canvasProbe: CanvasProbe }).canvasProbe.samples.map((s) => ({ ...s })),
  );

export interface DrawnSpeech {
  /** The largest opening measured before the speech (the shut mouth, idle). */
  closed: number;
  /** Frames while the voice was heard, and those of them with the mouth open. */
  speaking: number;
  open: number;
  maxOpen: number;
  /** Frames from 0.5 s after the voice's end, and the largest opening among them. */
  silent: number;
  silentMax: number;
  /** The canvas's luma: its spread (a picture, not one colour). */
  lumaSpread: number;
}

/**
 * Measures the avatar drawn on `canvas` (a selector) while `speak()` makes it say a sentence:
 * the probe starts, records the idle mouth for a second, then waits until the voice the page
 * plays has been loud and quiet again for 1.5 s.
 */
export async function measureDrawnSpeech(
  page: Page,
  canvas: string,
  mouthRegion: DOMRectInit,
  speak: () => Promise<unknown>,
): Promise<DrawnSpeech> {
  // Evaluated, not a <script>: the playground's Content-Security-Policy allows no inline script
  // (and the evaluation is not the page's: the policy stays as a developer gets it).
  await page.evaluate(await probeScript());
  await page.evaluate(
    ([selector, region]) =>
      (window as unknown as { canvasProbe: CanvasProbe }).canvasProbe.start(
        document.querySelector<HTMLCanvasElement>(selector as string)!,
        region as DOMRectInit,
      ),
    [canvas, mouthRegion] as const,
  );
  await page.waitForTimeout(1_000);
  const idle = await probeSamples(page);
  const closed = Math.max(...idle.slice(-20).map((s) => s.pixelOpen));
  const from = await page.evaluate(() => performance.now());
  await speak();
  await page.waitForFunction(
    (t) => {
      const s = (window as unknown as { canvasProbe: CanvasProbe }).canvasProbe.samples;
      const loud = s.filter((x) => x.at >= t && x.rms > 0.02);
      return loud.length > 30 && s.at(-1)!.at - loud.at(-1)!.at > 1_500;
    },
    from,
    { timeout: 90_000, polling: 200 },
  );
  const after = (await probeSamples(page)).filter((s) => s.at >= from);
  const loud = after.filter((s) => s.rms > 0.02);
  const speaking = after.filter((s) => s.at >= loud[0]!.at && s.at <= loud.at(-1)!.at);
  const silent = after.filter((s) => s.at > loud.at(-1)!.at + 500);
  const luma = await page.evaluate(
    (selector) =>
      (window as unknown as { canvasProbe: CanvasProbe }).canvasProbe.luma(
        document.querySelector<HTMLCanvasElement>(selector)!,
      ),
    canvas,
  );
  const mean = luma.reduce((a, b) => a + b, 0) / luma.length;
  const lumaSpread = Math.sqrt(luma.reduce((a, b) => a + (b - mean) ** 2, 0) / luma.length);
  return {
    closed,
    speaking: speaking.length,
    open: speaking.filter((s) => s.pixelOpen > closed + 0.03).length,
    maxOpen: Math.max(...speaking.map((s) => s.pixelOpen)),
    silent: silent.length,
    silentMax: Math.max(...silent.map((s) => s.pixelOpen)),
    lumaSpread,
  };
}

export const describeDrawnSpeech = (d: DrawnSpeech) =>
  `mouth open on ${d.open} of ${d.speaking} frames while the voice played (max ${d.maxOpen.toFixed(3)}, shut ${d.closed.toFixed(3)}), after it: max ${d.silentMax.toFixed(3)} over ${d.silent} frames; canvas luma spread ${d.lumaSpread.toFixed(1)}`;

/**
 * What a drawn, speaking face gives: a picture, the mouth open on a fifth of the frames while the
 * voice played. That it shuts after is `mouthShut`'s: when is a matter of the package's clock,
 * which a stalled voice on a loaded machine can put a second off (open at 0.119 more than 0.5 s
 * after the voice at load 13.5); visageAvatar.slow measures the timings.
 */
export function drawnSpeechProblem(d: DrawnSpeech): string | undefined {
  if (d.lumaSpread < 10) return 'the canvas shows no picture';
  if (d.speaking < 30) return 'the voice was not heard';
  if (d.open <= d.speaking * 0.2) return 'the drawn mouth did not open while the voice played';
  return undefined;
}

/** Waits until the drawn mouth has been shut (at most `closed`) for half a second: at most 15 s. */
export async function mouthShut(page: Page, closed: number): Promise<void> {
  await page.waitForFunction(
    (shut) => {
      const s = (window as unknown as { canvasProbe: CanvasProbe }).canvasProbe.samples;
      const tail = s.filter((x) => x.at > s.at(-1)!.at - 500);
      return tail.length >= 5 && tail.every((x) => x.pixelOpen <= shut + 0.01);
    },
    closed,
    { timeout: 15_000, polling: 200 },
  );
}
