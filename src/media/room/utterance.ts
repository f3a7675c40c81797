// SPDX-License-Identifier: GPL-3.0-or-later
import type { PhonemeTiming, WordTiming } from '../tts/index.js';
import type { PlaceWords } from './wordsAlignment.js';

/** Sample rate of everything the player pushes (the Opus track's rate). */
export const OUTPUT_RATE = 48_000;

/** A piece of an utterance's audio, ready to play: 48 kHz mono. */
export interface AudioChunk {
  pcm: Float32Array;
  /** Word timings relative to this chunk's start, offsets into the utterance's text. */
  words?: WordTiming[];
  /** Phoneme timings relative to this chunk's start (they may describe earlier or later audio). */
  phonemes?: PhonemeTiming[];
}

/** Something the avatar says: synthesized text, supplied audio, or a stream from an agent. */
export interface Utterance {
  readonly id: string;
  /** What is being said, for lk.chat; null when unknown (audio without a transcript). */
  readonly text: string | null;
  /**
   * What moves the mouth besides the sound itself (which always opens it, see
   * `SpeechPlayer.poseAt`): `timings`, the phoneme timings the chunks carry (synthesized
   * speech), which close the lips for m, b, p, f and v; `audio`, nothing else (supplied audio).
   */
  readonly mouth: 'timings' | 'audio';
  /**
   * Audio that comes with its words: aligns them to the audio as it comes and hands each
   * alignment to `place` (the words then shape the mouth, see `wordsMouth`), until `signal`
   * aborts. Called once, before `chunks`.
   */
  readonly words?: (place: PlaceWords, signal: AbortSignal) => void;
  /** Produces the audio chunk by chunk; stops when the signal aborts. */
  chunks(signal: AbortSignal): AsyncIterable<AudioChunk>;
  /** The avatar protocol's sender, told about playback (see avatarProtocol.ts). */
  readonly onStarted?: () => void;
  readonly onFinished?: (outcome: UtteranceOutcome) => void;
}

export interface UtteranceOutcome {
  interrupted: boolean;
  /** Ms of this utterance's audio that were heard. */
  playedMs: number;
  /** The part of the text that was heard (all of it when not interrupted). */
  heardText: string;
}
