// SPDX-License-Identifier: GPL-3.0-or-later
import type { DecodedAudio } from '../audio/index.js';
import type { AudioDecodeErrorCode } from '../audio/index.js';
import type { SpeechDetection } from '../voiceActivity/index.js';

/** Messages between the audio thread pool and its threads. */
export type AudioTask =
  | {
      kind: 'decode';
      bytes: Uint8Array;
      contentType?: string;
      maxDurationMs?: number;
    }
  | { kind: 'detectSpeech'; mono: Float32Array; sampleRate: number }
  /** Loads the voice-activity model now, so that the first voice made does not wait for it. */
  | { kind: 'loadSpeechModel' };

export type AudioTaskResult = DecodedAudio | SpeechDetection | { speechModelLoaded: true };

export type AudioThreadReply =
  | { id: number; result: AudioTaskResult }
  | { id: number; error: { message: string; code?: AudioDecodeErrorCode; limitMs?: number } };
