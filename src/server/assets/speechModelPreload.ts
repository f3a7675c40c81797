// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { reportStep, type StartupProgress } from '../../media/startupProgress.js';
import type { TtsEngines } from '../../media/tts/index.js';
import { speechThreadPool } from '../../media/audioThreads/index.js';

/**
 * Prepares what `POST /v1/voices` needs in this process (a step `voices` when given `progress`):
 * the voice-activity model every reference clip is checked with, and, when espeak-ng makes new
 * voices, espeak-ng itself (its calibration synthesizes probes here, in the API process, while
 * the media processes warm their own). Without it the first voice made after a start waited seconds
 * for both (15 s against 2 s for the next one on a busy 2-core machine). Both load off the event
 * loop; the node runs this after its start, in a lull of creates (runtime.ts; it is no part of
 * being ready). A failure is only logged: the first voice then loads them itself.
 */
export async function preloadSpeechModel(
  log: Logger,
  progress: StartupProgress | undefined,
  tts: TtsEngines,
): Promise<void> {
  try {
    await reportStep(
      progress,
      'voices',
      'loading the voice-activity model and the speech engine',
      () =>
        Promise.all([
          speechThreadPool().loadSpeechModel(),
          tts.defaultId === 'espeak' ? tts.default.prepare() : undefined,
        ]),
      () => 'ready to make voices',
    );
  } catch (err) {
    log.warn({ err }, 'could not prepare voice making; the first voice will load what it needs');
  }
}
