import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photoThreadPool } from '../../../src/media/photo/index.js';
import { usablePortraits } from '../../support/portraitSet.js';
import { figuresRow, measurePortrait, mouthFailures } from './mouthFigures.js';

/**
 * The mouth as a viewer sees it (issue 31, part 3), on every usable portrait of the labelled
 * set, measured on its widest-open frame (AA at full openness) by a face detector's landmarks
 * and face recognition: the face is still the photo's (distance under 0.35), the chin goes down
 * (at least 4 % of the nose-to-chin height), and under the upper lip are the upper teeth with the
 * dark of the mouth below them (the inner mouth's top band brighter than its middle; the photo's
 * own upper teeth still showing at least 60 % of their height), whether the photo smiles with
 * its teeth or keeps its lips closed. See docs/photo-avatars.md.
 *
 * Like with like: where the build turned a tilted head upright, the frame is compared with the
 * photo turned by the same angle. The recognition net does not align a face by its roll, so the
 * tilted photo is as far from itself turned upright (0.72 at 44 degrees, 0.70 at 25, 0.44 at
 * 15.5, no rendering involved) as from the frames: compared with it, the figure measured the
 * turn, not the person (mouthFigures.ts, photoToCompare).
 */

/**
 * Portraits that miss a goal today, with why (docs/photo-avatars.md, "Where it falls short").
 * Printed with their figures; any other portrait that misses a goal fails the test.
 */
const KNOWN_MISSES = new Map<string, string>([
  [
    'Nicolas Cage, close-up, head tipped',
    'identity: 0.26 at rest and 0.38 wide open from the photo turned upright on grey; the open mouth moves his face 0.32 from his own rest frame (his head-and-shoulders portrait: 0.30, met from 0.08 at rest)',
  ],
  [
    'Bill Murray, moustache',
    'wide open the detector puts the inner upper lip at the lower edge of the synthesized teeth under the moustache (2 to 3 px into the dark: top band and middle both dark, 0 px of teeth), and moves it 5 px with a change in the mouth the eye barely sees (no tongue: on the teeth); identity is met',
  ],
]);

const failures = new Map<string, string[]>();
let names: string[] = [];

beforeAll(async () => {
  const portraits = await usablePortraits();
  names = portraits.map((p) => p.name);
  const table: Record<string, Record<string, string>> = {};
  for (const [i, portrait] of portraits.entries()) {
    try {
      const { figures } = await measurePortrait(portrait.bytes, `mouth-${i}`);
      failures.set(portrait.name, mouthFailures(figures));
      table[portrait.name] = figuresRow(figures);
    } catch (err) {
      failures.set(portrait.name, [`not measured: ${(err as Error).message}`]);
      table[portrait.name] = { 'identity (< 0.35)': (err as Error).message };
    }
    const missed = failures.get(portrait.name)!;
    table[portrait.name]!.goals = missed.length
      ? `missed (${KNOWN_MISSES.get(portrait.name) ?? 'not a known miss'})`
      : 'met';
  }
  console.log('The mouth at its widest (AA, full openness), per usable portrait:');
  console.table(table);
}, 2_400_000);

afterAll(() => photoThreadPool().close());

describe('the mouth wide open, on every usable portrait', () => {
  it('keeps the person, drops the chin, and shows the upper teeth above the dark', () => {
    expect(names.length).toBeGreaterThan(0);
    const unexpected = names.flatMap((name) =>
      KNOWN_MISSES.has(name) ? [] : failures.get(name)!.map((what) => `${name}: ${what}`),
    );
    expect(unexpected).toEqual([]);
    // Most portraits meet every goal: the known misses stay the exception.
    const met = names.filter((name) => failures.get(name)!.length === 0).length;
    console.log(`${met} of ${names.length} portraits meet every goal`);
    expect(met).toBeGreaterThan(names.length / 2);
  });
});
