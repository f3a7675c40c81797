// SPDX-License-Identifier: GPL-3.0-or-later
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type * as Ort from 'onnxruntime-web';

/**
 * Silero VAD (v5, MIT) run by onnxruntime-web (WebAssembly, single-threaded): a neural
 * voice-activity detector that tells speech from silence, steady tones, noise and music, where
 * energy- or GMM-based detectors (WebRTC VAD) call all of those speech. The model file ships in
 * the `@ricky0123/vad-web` npm package, so nothing is fetched at run time.
 *
 * Input: 16 kHz mono float frames of 512 samples (32 ms), each preceded by the last 64 samples
 * of the previous frame; output: the probability that the frame is speech. The recurrent state
 * is carried across frames and reset per window.
 */
export const SILERO_SAMPLE_RATE = 16_000;
const FRAME = 512;
const CONTEXT = 64;

export class SileroVad {
  private constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
  ) {}

  static async load(): Promise<SileroVad> {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = 1;
    const require = createRequire(import.meta.url);
    const model = await readFile(require.resolve('@ricky0123/vad-web/dist/silero_vad_v5.onnx'));
    const session = await ort.InferenceSession.create(model);
    return new SileroVad(ort, session);
  }

  /** Speech probability of each 32 ms frame of a 16 kHz mono window. */
  async frameProbabilities(window: Float32Array): Promise<Float32Array> {
    const { ort } = this;
    const rate = new ort.Tensor('int64', BigInt64Array.from([BigInt(SILERO_SAMPLE_RATE)]));
    let state: Ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    const frames = Math.floor(window.length / FRAME);
    const out = new Float32Array(frames);
    const input = new Float32Array(CONTEXT + FRAME);
    for (let f = 0; f < frames; f++) {
      const start = f * FRAME;
      input.fill(0, 0, CONTEXT);
      if (start >= CONTEXT) input.set(window.subarray(start - CONTEXT, start), 0);
      input.set(window.subarray(start, start + FRAME), CONTEXT);
      const result = await this.session.run({
        input: new ort.Tensor('float32', input.slice(), [1, CONTEXT + FRAME]),
        state,
        sr: rate,
      });
      state = result.stateN as Ort.Tensor;
      out[f] = (result.output!.data as Float32Array)[0]!;
    }
    return out;
  }
}
