// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Writes PNG snapshots of every avatar (neutral, several visemes, blink, parked) for a human to
 * look at: `npx tsx test/media/render/writeSnapshots.ts [outDir]` (default /tmp/visage-snapshots).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import type { Viseme } from '../../../src/media/lipsync/viseme.js';
import { createFaceRenderer, prepareAvatar } from '../../../src/media/render/faceRenderer.js';
import { i420ToPng } from '../../../src/media/render/pngSnapshot.js';

const outDir = process.argv[2] ?? '/tmp/visage-snapshots';
mkdirSync(outDir, { recursive: true });

for (const avatar of AVATAR_CATALOGUE) {
  const prep = prepareAvatar(avatar.avatarId);
  console.log(
    `${avatar.name}: atlas ${prep.buildMs.toFixed(0)} ms, ${(prep.bytes / 1e6).toFixed(1)} MB`,
  );
  const shots: [string, number, Viseme, number, boolean][] = [
    ['neutral', 0, 'rest', 0, false],
    ['AA', 0, 'AA', 1, false],
    ['E', 0, 'E', 1, false],
    ['I', 0, 'I', 1, false],
    ['O', 0, 'O', 1, false],
    ['U', 0, 'U', 1, false],
    ['MBP', 0, 'MBP', 1, false],
    ['FV', 0, 'FV', 1, false],
    ['TH', 0, 'TH', 1, false],
    ['SZ', 0, 'SZ', 1, false],
    ['AA-half', 0, 'AA', 0.5, false],
    ['parked', 0, 'rest', 0, true],
  ];
  for (const [name, , viseme, openness, parked] of shots) {
    const r = createFaceRenderer(avatar.avatarId, { seed: 7 });
    // Parked frames settle for a second so the lids are down.
    let frame = r.renderFrame({ timeMs: 0, mouth: { viseme, openness }, parked });
    for (let t = 40; parked && t <= 1000; t += 40)
      frame = r.renderFrame({ timeMs: t, mouth: { viseme, openness }, parked });
    const png = i420ToPng({ width: r.width, height: r.height, data: frame });
    writeFileSync(join(outDir, `${avatar.name}-${name}.png`), png);
  }
  // A blink: the idle frame whose eye region differs most from the first frame's.
  const r = createFaceRenderer(avatar.avatarId, { seed: 3 });
  const rest = { viseme: 'rest', openness: 0 } as const;
  const first = r.renderFrame({ timeMs: 0, mouth: rest, parked: false }).slice();
  let best = { diff: -1, frame: first };
  for (let t = 40; t < 6000; t += 40) {
    const frame = r.renderFrame({ timeMs: t, mouth: rest, parked: false });
    const diff = regionDiff(first, frame, r.eyeRegion);
    if (diff > best.diff) best = { diff, frame: frame.slice() };
  }
  writeFileSync(
    join(outDir, `${avatar.name}-blink.png`),
    i420ToPng({ width: 512, height: 512, data: best.frame }),
  );
}

function regionDiff(
  a: Uint8Array,
  b: Uint8Array,
  rect: { x: number; y: number; width: number; height: number },
): number {
  let sum = 0;
  for (let y = rect.y; y < rect.y + rect.height; y++) {
    for (let x = rect.x; x < rect.x + rect.width; x++)
      sum += Math.abs((a[y * 512 + x] ?? 0) - (b[y * 512 + x] ?? 0));
  }
  return sum;
}
