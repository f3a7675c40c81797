// SPDX-License-Identifier: GPL-3.0-or-later
/** Resolves on the first SIGINT or SIGTERM; a second signal exits at once. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.once('SIGINT', () => process.exit(130));
      process.once('SIGTERM', () => process.exit(143));
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/**
 * Until a signal, or until the node fails (its media core could not start): what stopped it.
 * The caller closes the node either way, and exits non-zero on a failure.
 */
export function untilStopped(failed: Promise<Error>): Promise<NodeJS.Signals | Error> {
  return Promise.race([untilSignal(), failed]);
}
