// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { DURATIONS_FILE, LongestFirst } from './longestFirst.js';

const root = resolve('.');
const spec = (project: string, path: string) =>
  ({ project: { name: project }, moduleId: resolve(root, path) }) as unknown as TestSpecification;
const order = async (specs: TestSpecification[]) =>
  (await new LongestFirst({ config: { root } } as unknown as Vitest).sort(specs)).map(
    (s) => `${s.project.name}:${s.moduleId.slice(root.length + 1)}`,
  );

describe("vitest's file order (longest first)", () => {
  const durations = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  const known = Object.entries(durations).sort(([, a], [, b]) => b - a);

  it('starts the longest measured files first, across both projects', async () => {
    const [longest, second] = known;
    const shortest = known.at(-1)!;
    const asSpec = ([key]: [string, number]) => spec(key.split(':')[0]!, key.split(':')[1]!);
    expect(await order([shortest, second!, longest!].map(asSpec))).toEqual(
      [longest!, second!, shortest].map(([key]) => key),
    );
  });

  it('guesses a file it has no figure for by its tier: slow and postgres before fast', async () => {
    expect(
      await order([
        spec('embedded', 'test/new/a.test.ts'),
        spec('embedded', 'test/new/b.slow.test.ts'),
        spec('postgres', 'test/new/c.postgres.test.ts'),
      ]),
    ).toEqual([
      'embedded:test/new/b.slow.test.ts',
      'postgres:test/new/c.postgres.test.ts',
      'embedded:test/new/a.test.ts',
    ]);
  });

  it('names only test files that exist, so the figures follow renames', () => {
    const missing = Object.keys(durations)
      .map((key) => key.slice(key.indexOf(':') + 1))
      .filter((path) => {
        try {
          readFileSync(path);
          return false;
        } catch {
          return true;
        }
      });
    expect(missing, `run node test/fileDurations.js after a whole run`).toEqual([]);
  });
});
