#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// Runs one command inside a private test network namespace, as `npm test` runs vitest:
//   node test/inNetns.js npx vitest run test/media/room/avatarInputs.slow.test.ts
// For working on one WebRTC suite without the static checks and the rest of the run. Root only.
import { runChild } from './runChild.js';
import { NETNS_ADDRESSES, openNamespace } from './netns.js';

const command = process.argv.slice(2);
if (command.length === 0) {
  console.error('usage: node test/inNetns.js <command> [args...]');
  process.exit(2);
}
const netns = openNamespace('visage-dev-');
if (!netns.name) {
  console.error(`no network namespace: ${netns.reason}`);
  process.exit(1);
}
const code = await runChild(['ip', 'netns', 'exec', netns.name, ...command], {
  VISAGE_TEST_NETNS: netns.name,
  VISAGE_TEST_ADDRESS: NETNS_ADDRESSES[0],
});
netns.close();
process.exit(code);
