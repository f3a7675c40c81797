// SPDX-License-Identifier: GPL-3.0-or-later
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';

describe('the test run scratch folder', () => {
  it('holds every temp dir a test makes, so the run removes them all when it ends', () => {
    const root = process.env.VISAGE_TEST_SCRATCH;
    expect(root).toMatch(/visage-test-run-/);
    expect(tmpdir()).toBe(root);
  });
});
