// SPDX-License-Identifier: GPL-3.0-or-later
// Runs a command with inherited stdio, forwarding Ctrl-C / SIGTERM to it (so a namespace's
// cleanup in the parent still runs), and resolves with its exit code.
import { spawn } from 'node:child_process';

export function runChild(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(args[0], args.slice(1), {
      stdio: 'inherit',
      env: { ...process.env, ...env },
    });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}
