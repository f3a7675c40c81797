// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { toInt16 } from '../audio/index.js';
import {
  AudioMouthTracker,
  ipaToVisemeUnits,
  MouthSchedule,
  REST_POSE,
  speechMouth,
  visemeTimeline,
  wordsMouth,
  type MouthPose,
  type PhonemeTiming,
  type Viseme,
} from '../lipsync/index.js';
import type { WordTiming } from '../tts/index.js';
import type { AudioSink } from './audioSink.js';
import type { PlayoutClock } from './playoutClock.js';
import { OUTPUT_RATE, type Utterance, type UtteranceOutcome } from './utterance.js';

/** What listeners hear about, timed to playout (not to synthesis). */
export interface PlayerEvents {
  started(u: Utterance): void;
  /** More of the text was heard: `heardText` is the utterance's text up to the last heard word. */
  progress(u: Utterance, heardText: string): void;
  finished(u: Utterance, outcome: UtteranceOutcome): void;
  speakingChanged(speaking: boolean): void;
  /**
   * A chunk of `u` is about to be queued: its words and mouth shapes on the playout clock (ms of
   * audio, see PlayoutClock), before its audio is heard. For renderers elsewhere (client mode).
   */
  queued?(u: Utterance, timing: QueuedTiming): void;
}

/** The words and mouth shapes of a queued chunk, on the playout clock. */
export interface QueuedTiming {
  words: { text: string; startMs: number; endMs: number }[];
  visemes: { viseme: Viseme; startMs: number; endMs: number }[];
}

/** 100 ms frames: each is one FFI call on the event loop (20 ms frames cost five times more); an
 * interrupt clears the native queue whatever the frame size. */
export const FRAME_SAMPLES = OUTPUT_RATE / 10;
/** How often playout-timed events are checked. */
const TICK_MS = 20;
/**
 * Audio reaches a subscriber later than video captured at the same moment (the audio source's
 * native buffering and the receiver's jitter buffer). Measured with `npm run bench` (lip-sync
 * offset): the mouth led the sound by ~60 ms; showing the pose from this much earlier in the
 * audio brings them together.
 */
const AUDIO_PATH_LATENCY_MS = 50;

interface Playing {
  u: Utterance;
  abort: AbortController;
  /** Playout time of the first sample; null until audio was pushed. */
  startMs: number | null;
  /** Heard so far (UTF-16 offset into the text). */
  heardChars: number;
  /** Each word timed so far: where it starts on the playout clock, where it ends in the text. */
  words: { atMs: number; charEnd: number }[];
  started: boolean;
  done: boolean;
  /** The engine failed mid-utterance: it ends with what was heard. */
  failed: boolean;
  /** Wall-clock marks (ms since the epoch) of the way to its first audio, for the log. */
  marks: { queued: number; playing: number; firstChunk?: number; handed?: number };
}

/** Wall-clock ms since the epoch with sub-ms precision, comparable across processes. */
const epochMs = () => performance.timeOrigin + performance.now();

interface TimedEvent {
  atMs: number;
  owner: Playing;
  run: () => void;
}

/**
 * The avatar's voice: a queue of utterances played one after another into the audio sink, with
 * the mouth (phoneme timelines, or the audio itself) and the progress events on the same playout
 * clock. `interrupt` stops at once: the sink is cleared, the mouth closes, queued utterances are
 * dropped, and the current one finishes with only what was heard.
 */
export class SpeechPlayer {
  private queue: Utterance[] = [];
  private current: Playing | null = null;
  private running = false;
  private speakingNow = false;
  /** An utterance's chunks are still being pushed. */
  private pushingNow = false;
  private events: TimedEvent[] = [];
  private ticker: NodeJS.Timeout | undefined;
  private readonly schedule = new MouthSchedule();
  /** Words aligned to supplied audio (`Utterance.words`), on the same playout clock. */
  private readonly words = new MouthSchedule();
  private readonly tracker = new AudioMouthTracker();
  private closed = false;
  /** When each queued utterance was handed to the player (epoch ms). */
  private readonly queuedAt = new Map<string, number>();

  constructor(
    private readonly sink: AudioSink,
    private readonly clock: PlayoutClock,
    private readonly listeners: PlayerEvents,
    private readonly log: Logger,
  ) {}

  get speaking(): boolean {
    return this.speakingNow;
  }

  /**
   * More audio is coming: an utterance's audio is still being pushed, or one waits in the queue.
   * (Once the last is pushed, what follows its end is silence.)
   */
  get pushing(): boolean {
    return this.pushingNow || this.queue.length > 0;
  }

  /**
   * While more audio is coming, how far ahead of now the mouth of the audio pushed so far is
   * final (the audio queued, less what the mouth reads ahead of each time: the tracker's
   * `finalUntilMs`); 0 once that has run out; undefined when no more audio is coming.
   */
  mouthKnownAheadMs(): number | undefined {
    if (!this.pushing) return undefined;
    const unread = this.clock.endMs - this.tracker.finalUntilMs;
    return Math.max(0, this.clock.queuedMs() - Math.max(0, unread));
  }

  enqueue(u: Utterance): void {
    if (this.closed) return;
    this.queuedAt.set(u.id, epochMs());
    this.queue.push(u);
    if (!this.running) void this.run();
  }

  /**
   * The mouth at playout time `tMs`: the sound opens it; the words aligned to supplied audio
   * shape it and close it (`wordsMouth`); phoneme timings of synthesized speech close it
   * (`speechMouth`).
   */
  private poseAt(tMs: number): MouthPose {
    const sound = this.tracker.poseAt(tMs);
    const words = this.words.poseAt(tMs);
    if (words !== REST_POSE) return wordsMouth(sound, words);
    return speechMouth(sound, this.schedule.poseAt(tMs));
  }

  /**
   * The mouth for a video frame captured now: the pose of the sound a viewer hears when the frame
   * reaches them. At rest once the audio has played out or was cut.
   */
  mouthNow(): MouthPose {
    const heard = this.clock.heardAt(AUDIO_PATH_LATENCY_MS);
    return heard === null ? REST_POSE : this.poseAt(heard);
  }

  /**
   * The mouth of the sound leaving for the room `aheadMs` from now (client mode sends the face
   * ahead, stamped with that time), from the audio pushed so far.
   */
  mouthLeavingIn(aheadMs: number): MouthPose {
    const leaving = this.clock.leavingIn(aheadMs);
    return leaving === null ? REST_POSE : this.poseAt(leaving);
  }

  interrupt(): { interrupted: boolean; droppedUtterances: number } {
    const dropped = this.queue.splice(0);
    const cur = this.current;
    this.current = null;
    cur?.abort.abort();
    const at = this.clock.cut();
    this.sink.clear();
    this.schedule.cut(at);
    this.words.cut(at);
    this.tracker.truncate(at);
    this.events = [];
    // Played up to the cut, it was heard, whether or not the 20 ms ticks (late on a busy
    // machine) had said so yet.
    if (cur && !cur.started && cur.startMs !== null && at > cur.startMs) this.start(cur);
    if (cur) this.finish(cur, true, at);
    for (const u of dropped) {
      this.queuedAt.delete(u.id);
      u.onFinished?.({ interrupted: true, playedMs: 0, heardText: '' });
    }
    this.updateSpeaking();
    return { interrupted: cur !== null, droppedUtterances: dropped.length };
  }

  close(): void {
    this.interrupt();
    this.closed = true;
    clearInterval(this.ticker);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      for (let u = this.queue.shift(); u && !this.closed; u = this.queue.shift()) {
        await this.play(u);
      }
    } finally {
      this.running = false;
    }
  }

  private async play(u: Utterance): Promise<void> {
    const p: Playing = {
      u,
      abort: new AbortController(),
      startMs: null,
      heardChars: 0,
      words: [],
      started: false,
      done: false,
      failed: false,
      marks: { queued: this.queuedAt.get(u.id) ?? epochMs(), playing: epochMs() },
    };
    this.queuedAt.delete(u.id);
    this.current = p;
    const signal = p.abort.signal;
    /** The utterance's phonemes so far, on its own time line (0 = its first sample). */
    const phonemes: PhonemeTiming[] = [];
    // Words aligned to the audio: placed once the utterance has a place on the playout clock.
    const wordsDone = new AbortController();
    signal.addEventListener('abort', () => wordsDone.abort(), { once: true });
    let aligned: { phonemes: PhonemeTiming[]; coveredMs: number } | undefined;
    const placeWords = () => {
      if (aligned && p.startMs !== null && !wordsDone.signal.aborted) {
        this.words.place(u.id, visemeTimeline(aligned.phonemes), p.startMs, aligned.coveredMs);
      }
    };
    this.pushingNow = true;
    try {
      u.words?.((ph, coveredMs) => {
        aligned = { phonemes: ph, coveredMs };
        placeWords();
      }, wordsDone.signal);
      for await (const chunk of u.chunks(signal)) {
        if (signal.aborted) break;
        p.marks.firstChunk ??= epochMs();
        const chunkStart = this.clock.endMs;
        if (p.startMs === null) {
          p.startMs = chunkStart;
          this.at(chunkStart, p, () => this.start(p));
          placeWords();
        }
        this.tracker.push(chunk.pcm, OUTPUT_RATE, chunkStart);
        if (this.listeners.queued) this.listeners.queued(u, queuedTiming(chunk, chunkStart));
        if (u.mouth === 'timings' && chunk.phonemes && chunk.phonemes.length > 0) {
          // One track for the whole utterance, rebuilt as its timings arrive.
          const offset = chunkStart - p.startMs;
          for (const ph of chunk.phonemes) {
            phonemes.push({ ...ph, startMs: ph.startMs + offset, endMs: ph.endMs + offset });
          }
          phonemes.sort((a, b) => a.startMs - b.startMs);
          this.schedule.place(u.id, visemeTimeline(phonemes), p.startMs);
        }
        for (const w of chunk.words ?? []) {
          // Timings that came after their audio (a provider's alignment) can point before the
          // utterance's start: never before it is started.
          const atMs = Math.max(p.startMs, chunkStart + w.startMs);
          p.words.push({ atMs, charEnd: w.charEnd });
          this.at(atMs, p, () => this.heard(p, w.charEnd));
        }
        await this.push(p, chunk.pcm, signal);
      }
    } catch (err) {
      if (!signal.aborted) {
        p.failed = true;
        this.log.error({ err, utterance_id: u.id }, 'utterance failed');
      }
    } finally {
      this.pushingNow = false;
    }
    if (signal.aborted || p.done) return wordsDone.abort();
    // Everything is pushed: finish when playout reaches its end.
    const end = this.clock.endMs;
    await new Promise<void>((resolve) => {
      if (p.startMs === null) return resolve();
      this.at(end, p, resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    wordsDone.abort();
    if (!signal.aborted && !p.done) {
      this.current = null;
      this.finish(p, false, end);
      this.updateSpeaking();
    }
  }

  private async push(p: Playing, pcm: Float32Array, signal: AbortSignal): Promise<void> {
    for (let i = 0; i < pcm.length && !signal.aborted; i += FRAME_SAMPLES) {
      const frame = pcm.subarray(i, i + FRAME_SAMPLES);
      const aheadMs = this.clock.queuedMs();
      this.clock.push((frame.length / OUTPUT_RATE) * 1000);
      await this.sink.capture(toInt16(frame));
      if (p.marks.handed === undefined) this.logFirstAudio(p, aheadMs);
      // A capture blocked on a full queue completes after an interrupt's clear: clear again so
      // that frame is not heard after the interrupt.
      if (signal.aborted) this.sink.clear();
    }
  }

  /**
   * Where the time to an utterance's first audio went, once per utterance (info): waiting behind
   * other utterances, the engine's first chunk, handing it to LiveKit, and the audio already
   * queued ahead of it. `queued_at` (epoch ms) lets a client compute the rest of the way.
   */
  private logFirstAudio(p: Playing, aheadMs: number): void {
    const handed = (p.marks.handed = epochMs());
    const { queued, playing, firstChunk = playing } = p.marks;
    this.log.info(
      {
        utterance_id: p.u.id,
        queued_at: Math.round(queued * 10) / 10,
        waited_ms: Math.round((playing - queued) * 10) / 10,
        first_chunk_ms: Math.round((firstChunk - playing) * 10) / 10,
        handed_ms: Math.round((handed - firstChunk) * 10) / 10,
        ahead_ms: Math.round(aheadMs),
      },
      'first audio handed to LiveKit',
    );
  }

  private start(p: Playing): void {
    p.started = true;
    this.updateSpeaking();
    p.u.onStarted?.();
    this.listeners.started(p.u);
  }

  /** The text up to `charEnd` was heard (a word's start reached the listener). */
  private heard(p: Playing, charEnd: number): void {
    if (charEnd <= p.heardChars) return;
    p.heardChars = charEnd;
    this.listeners.progress(p.u, this.heardText(p));
  }

  private finish(p: Playing, interrupted: boolean, atMs: number): void {
    if (p.done) return;
    p.done = true;
    const cutShort = interrupted || p.failed;
    if (!cutShort) p.heardChars = p.u.text?.length ?? 0;
    // Cut short: every word that started before the end was heard, by the playout clock, not
    // only those the ticks had reached (they run late on a busy machine).
    for (const w of p.words) if (w.atMs < atMs) p.heardChars = Math.max(p.heardChars, w.charEnd);
    const outcome: UtteranceOutcome = {
      interrupted,
      playedMs: p.startMs === null ? 0 : Math.max(0, atMs - p.startMs),
      heardText: cutShort ? this.heardText(p) : (p.u.text ?? ''),
    };
    if (interrupted && !p.started) {
      // Never heard: no chat messages, but a protocol sender still needs its answer.
      p.u.onFinished?.(outcome);
      return;
    }
    p.u.onFinished?.(outcome);
    this.listeners.finished(p.u, outcome);
  }

  private heardText(p: Playing): string {
    return (p.u.text ?? '').slice(0, p.heardChars).trimEnd();
  }

  /** Speaking from the first heard sample until nothing is playing or queued. */
  private updateSpeaking(): void {
    const busy = this.current !== null || this.queue.length > 0;
    const now = this.current?.started === true || (this.speakingNow && busy);
    if (now !== this.speakingNow) {
      this.speakingNow = now;
      this.listeners.speakingChanged(now);
    }
  }

  /** Runs `fn` when playout reaches `atMs`. */
  private at(atMs: number, owner: Playing, run: () => void): void {
    this.events.push({ atMs, owner, run });
    this.events.sort((a, b) => a.atMs - b.atMs);
    this.ensureTicker();
  }

  private ensureTicker(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => this.tick(), TICK_MS);
  }

  private tick(): void {
    const now = this.clock.position();
    while (this.events.length > 0 && this.events[0]!.atMs <= now) {
      const e = this.events.shift()!;
      if (!e.owner.done) e.run();
    }
    if (this.events.length === 0 && !this.running) {
      clearInterval(this.ticker);
      this.ticker = undefined;
      this.schedule.prune(now - 1000);
      this.words.prune(now - 1000);
    }
  }
}

/** A chunk's words and its phonemes' mouth shapes, moved onto the playout clock at `atMs`. */
function queuedTiming(
  chunk: { words?: readonly WordTiming[]; phonemes?: readonly PhonemeTiming[] },
  atMs: number,
): QueuedTiming {
  const words = (chunk.words ?? []).map((w) => ({
    text: w.text,
    startMs: atMs + w.startMs,
    endMs: atMs + w.endMs,
  }));
  const visemes: QueuedTiming['visemes'] = [];
  for (const ph of chunk.phonemes ?? []) {
    let from = atMs + ph.startMs;
    const span = ph.endMs - ph.startMs;
    for (const unit of ipaToVisemeUnits(ph.ipa, ph.stressed)) {
      const to = from + span * unit.weight;
      visemes.push({ viseme: unit.viseme, startMs: from, endMs: to });
      from = to;
    }
  }
  return { words, visemes };
}
