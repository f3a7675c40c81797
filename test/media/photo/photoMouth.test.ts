import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photoWorkerPool } from '../../../src/media/photo/index.js';
import { usablePortraits } from '../../support/portraitSet.js';
import { figuresRow, measurePortrait, mouthFailures, type MouthFigures } from './mouthFigures.js';

/**
 * The mouth as a viewer sees it (issue 31, part 3), on every usable portrait of the labelled
 * set, measured on its widest-open frame (AA at full openness) by a face detector's landmarks
 * and face recognition: the face is still the photo's (distance under 0.35), the chin goes down
 * (at least 4 % of the nose-to-chin height), and under the upper lip are the upper teeth with the
 * dark of the mouth below them (the inner mouth's top band brighter than its middle; the photo's
 * own upper teeth still showing at least 70 % of their height), whether the photo smiles with
 * its teeth or keeps its lips closed.
 */
const figures = new Map<string, MouthFigures | string>();
let names: string[] = [];

beforeAll(async () => {
  const portraits = await usablePortraits();
  names = portraits.map((p) => p.name);
  const table: Record<string, Record<string, string>> = {};
  for (const [i, portrait] of portraits.entries()) {
    try {
      const { figures: f } = await measurePortrait(portrait.bytes, `mouth-${i}`);
      figures.set(portrait.name, f);
      table[portrait.name] = figuresRow(f);
    } catch (err) {
      figures.set(portrait.name, `not measured: ${(err as Error).message}`);
      table[portrait.name] = { 'identity (< 0.35)': (err as Error).message };
    }
  }
  console.log('The mouth at its widest (AA, full openness), per portrait:');
  console.table(table);
}, 2_400_000);

afterAll(() => photoWorkerPool().close());

describe('the mouth wide open, on every usable portrait', () => {
  it('keeps the person, drops the chin, and shows the upper teeth above the dark', () => {
    expect(names.length).toBeGreaterThan(0);
    const failures = names.flatMap((name) => {
      const f = figures.get(name)!;
      return (typeof f === 'string' ? [f] : mouthFailures(f)).map((what) => `${name}: ${what}`);
    });
    expect(failures).toEqual([]);
  });
});
