import type { Logger } from 'pino';
import { reportStep, type StartupProgress } from '../media/startupProgress.js';
import { speechWorkerPool } from '../media/worker/index.js';

/**
 * Loads the voice-activity model that `POST /v1/voices` runs on every reference clip, as a
 * reported start-up step (`vad`), so that the first voice made after a start answers in its usual
 * time instead of waiting seconds for onnxruntime's WebAssembly and the model to load. It runs on
 * the speech pool's own thread, beside the other steps. A failure is only logged: the first voice
 * then loads the model itself, as it would without this.
 */
export async function preloadSpeechModel(
  log: Logger,
  progress: StartupProgress | undefined,
): Promise<void> {
  try {
    await reportStep(
      progress,
      'vad',
      'loading the voice-activity model',
      () => speechWorkerPool().loadSpeechModel(),
      () => 'voice-activity model loaded',
    );
  } catch (err) {
    log.warn({ err }, 'could not preload the voice-activity model; the first voice will load it');
  }
}
