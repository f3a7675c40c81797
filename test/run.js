#!/usr/bin/env node
// `npm test`: static checks, then every vitest suite. WebRTC suites need a network namespace
// (libwebrtc ignores loopback), which test/netns.js creates when run as root.
import { spawnSync } from 'node:child_process';

function step(name, cmd, args, env = {}) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.status !== 0) {
    console.error(`\n== ${name} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

step('format', 'npx', ['prettier', '--check', '.']);
step('lint', 'npx', ['eslint', '.']);
step('typecheck', 'npx', ['tsc', '--noEmit']);
step('tests', 'npx', ['vitest', 'run', ...process.argv.slice(2)]);
