// SPDX-License-Identifier: GPL-3.0-or-later
import { LiveTranscript } from './wordsAlignment.js';

/** The most transcripts kept waiting for their audio, or audio streams waiting for words. */
const MAX_WAITING = 16;

/**
 * Pairs the agent's reply transcripts (`lk.transcription` segments, by `lk.segment_id`) with the
 * audio streams of the avatar protocol (`lk.audio_stream`, one per segment), in order: agents-js
 * opens both for each reply, the text either before the audio (transcription not synchronized)
 * or as it is heard (synchronized, the default). Neither stream names the other, so the n-th
 * new segment goes with the n-th audio stream; a wrong pairing costs nothing but the words'
 * help, since words that the audio does not say fail to align (`alignPhonemes`).
 */
export class ReplyTranscripts {
  private readonly segments = new Map<string, { transcript: LiveTranscript; text: string }>();
  /** Transcripts whose audio has not come yet. */
  private readonly unclaimed: LiveTranscript[] = [];
  /** Audio streams that came before their words: their transcripts wait for a segment. */
  private readonly waiting: LiveTranscript[] = [];
  /** Per text stream: what it carried so far, and the segment's text before it began. */
  private readonly streamTexts = new Map<string, string>();
  private readonly streamBase = new Map<string, string>();

  /**
   * More of segment `segmentId`: `text` is what one text stream carried so far; `streamId` tells
   * a new stream of a known segment (the whole text again, or the rest of it) from more of one.
   */
  segment(segmentId: string, streamId: string, text: string, final: boolean): void {
    let known = this.segments.get(segmentId);
    if (!known) {
      // A new segment: the words of the oldest audio stream still without them, or of the next.
      const waiting = this.waiting.shift();
      const transcript = waiting ?? new LiveTranscript();
      if (!waiting) {
        this.unclaimed.push(transcript);
        if (this.unclaimed.length > MAX_WAITING) this.unclaimed.shift();
      }
      known = { transcript, text: '' };
      this.segments.set(segmentId, known);
      this.trim();
    }
    const before = this.streamTexts.get(streamId);
    if (before === undefined) {
      // A new stream: the whole text again (non-delta streams) or what follows (delta streams).
      this.streamBase.set(streamId, text.startsWith(known.text) ? '' : known.text);
    }
    this.streamTexts.set(streamId, text);
    known.text = (this.streamBase.get(streamId) ?? '') + text;
    known.transcript.set(known.text, final);
  }

  /** The words for a new audio stream: a transcript already received, or one to come. */
  claim(): LiveTranscript {
    const ready = this.unclaimed.shift();
    if (ready) return ready;
    const transcript = new LiveTranscript();
    this.waiting.push(transcript);
    if (this.waiting.length > MAX_WAITING) this.waiting.shift();
    return transcript;
  }

  /**
   * The audio stream that claimed `transcript` has played out: words that come now are another
   * reply's (an agent that sent no transcript for it would otherwise shift every later pairing).
   */
  release(transcript: LiveTranscript): void {
    const i = this.waiting.indexOf(transcript);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** The agent interrupted its speech: words not yet paired will not be spoken. */
  clear(): void {
    this.unclaimed.length = 0;
    this.waiting.length = 0;
  }

  /** Forgets the oldest segments and streams: a long session does not accumulate them. */
  private trim(): void {
    while (this.segments.size > MAX_WAITING * 2) {
      this.segments.delete(this.segments.keys().next().value as string);
    }
    while (this.streamTexts.size > MAX_WAITING * 4) {
      const oldest = this.streamTexts.keys().next().value as string;
      this.streamTexts.delete(oldest);
      this.streamBase.delete(oldest);
    }
  }
}
