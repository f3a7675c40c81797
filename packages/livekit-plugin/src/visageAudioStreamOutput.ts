// SPDX-License-Identifier: Apache-2.0
import { voice } from '@livekit/agents';
import type { AudioFrame } from './agentsRtcTypes.js';
import { pluginLog } from './log.js';
import type { SessionCommandQueue } from './sessionCommandQueue.js';

/**
 * Audio mode: the agent's own TTS audio goes to the avatar over the standard LiveKit avatar
 * protocol (`lk.audio_stream`, RPC `lk.clear_buffer`, `lk.playback_started`/`finished`). The
 * only addition: a parked avatar is resumed (in order, on the session's queue) before the
 * first frame of a segment is sent.
 */
export class VisageAudioStreamOutput extends voice.DataStreamAudioOutput {
  readonly #queue: SessionCommandQueue;

  constructor(queue: SessionCommandQueue, options: voice.DataStreamAudioOutputOptions) {
    super(options);
    this.#queue = queue;
  }

  override async captureFrame(frame: AudioFrame): Promise<void> {
    if (this.#queue.parked) {
      await this.#queue.setWaiting(false).catch((err: unknown) => {
        pluginLog().warn({ err }, 'could not resume the parked avatar');
      });
    }
    await super.captureFrame(frame);
  }
}
