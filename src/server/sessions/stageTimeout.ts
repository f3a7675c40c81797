// SPDX-License-Identifier: GPL-3.0-or-later
/** A stage of a create (database, media start) that took longer than its bound. */
export class StageTimeoutError extends Error {
  constructor(
    readonly stage: string,
    readonly ms: number,
  ) {
    super(`${stage} took longer than ${ms / 1000} s`);
    this.name = 'StageTimeoutError';
  }
}

/**
 * Waits for `work` at most `ms`; past that it rejects with StageTimeoutError. Work that completes
 * after its deadline is handed to `late`, so whatever it started can be undone: nothing a create
 * began may outlive the create's failure.
 */
export function withinDeadline<T>(
  work: Promise<T>,
  ms: number,
  stage: string,
  late: (value: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(new StageTimeoutError(stage, ms));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (expired) late(value);
        else resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (!expired) reject(err as Error);
      },
    );
  });
}
