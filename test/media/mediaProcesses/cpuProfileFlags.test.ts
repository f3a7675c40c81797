// SPDX-License-Identifier: GPL-3.0-or-later
import { expect, it } from 'vitest';
import { cpuProfileFlags } from '../../../src/media/mediaProcesses/mediaProcessHandle.js';

it("passes the API process's CPU-profile flags on to a worker, values included, but not a fixed file name", () => {
  expect(cpuProfileFlags(['--import', 'tsx', '--max-old-space-size=512'])).toEqual([]);
  expect(cpuProfileFlags(['--cpu-prof', '--cpu-prof-dir=/tmp/p', '--import', 'tsx'])).toEqual([
    '--cpu-prof',
    '--cpu-prof-dir=/tmp/p',
  ]);
  expect(
    cpuProfileFlags(['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--cpu-prof-interval', '500']),
  ).toEqual(['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--cpu-prof-interval', '500']);
  // Every worker would write the same file.
  expect(
    cpuProfileFlags(['--cpu-prof', '--cpu-prof-name', 'api.cpuprofile', '--cpu-prof-name=x']),
  ).toEqual(['--cpu-prof']);
});
