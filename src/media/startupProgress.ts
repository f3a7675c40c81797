// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Start-up progress: a node reports each step it takes (opening the database, preparing the
 * avatars, warming the TTS engine, starting LiveKit), so that `visage dev` can show what it is
 * doing and how long each step took instead of staying silent.
 */
export interface StartupStep {
  /** Short name of the step: `database`, `avatars`, `tts`, `livekit`. */
  step: string;
  phase: 'started' | 'done';
  /** What is being done (started) or what came out (done), in a few words. */
  detail?: string;
  /** Duration of the step (done). */
  ms?: number;
}

export type StartupProgress = (event: StartupStep) => void;

/** Runs `work` as one reported step; its result may add to the `done` line. */
export async function reportStep<T>(
  progress: StartupProgress | undefined,
  step: string,
  detail: string,
  work: () => Promise<T>,
  doneDetail?: (result: T) => string | undefined,
): Promise<T> {
  const started = performance.now();
  progress?.({ step, phase: 'started', detail });
  const result = await work();
  progress?.({
    step,
    phase: 'done',
    detail: doneDetail?.(result),
    ms: performance.now() - started,
  });
  return result;
}
