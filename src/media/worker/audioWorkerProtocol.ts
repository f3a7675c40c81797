import type { DecodedAudio } from '../audio/index.js';
import type { AudioDecodeErrorCode } from '../audio/index.js';
import type { SpeechDetection } from '../speech/index.js';

/** Messages between the audio worker pool and its threads. */
export type AudioTask =
  | {
      kind: 'decode';
      bytes: Uint8Array;
      contentType?: string;
      maxDurationMs?: number;
    }
  | { kind: 'detectSpeech'; mono: Float32Array; sampleRate: number };

export type AudioTaskResult = DecodedAudio | SpeechDetection;

export type AudioWorkerReply =
  | { id: number; result: AudioTaskResult }
  | { id: number; error: { message: string; code?: AudioDecodeErrorCode; limitMs?: number } };
