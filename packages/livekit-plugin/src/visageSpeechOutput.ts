// SPDX-License-Identifier: Apache-2.0
import { voice } from '@livekit/agents';
import type { AudioFrame } from './agentsRtcTypes.js';
import type { AvatarChatMessage } from './avatarChat.js';
import { pluginLog } from './log.js';
import { markerText } from './markerFrame.js';
import type { SessionCommandQueue } from './sessionCommandQueue.js';

export interface VisageSpeechOutputOptions {
  /**
   * How long a segment may go without any sign of life from the avatar (a `/speak` answer or
   * an `lk.chat` message) before it is given up: the agent is never left `speaking` forever
   * when a final never comes. Milliseconds.
   */
  playbackTimeoutMs: number;
  /**
   * The longest an interruption waits for `/interrupt`'s answer and the avatar's final `lk.chat`
   * of the cut utterance (it carries exactly what was heard) before reporting the segment
   * finished with what is known. Keep it well under the framework's 5 s interruption watchdog.
   * Milliseconds.
   */
  interruptGraceMs: number;
}

/** One sentence sent to `/speak` and what the avatar reported of it. */
interface Utterance {
  text: string;
  id?: string;
  /** The latest text the avatar reported heard for it. */
  heard: string;
  started: boolean;
  final: boolean;
  /** Never reached the avatar (dropped by an interrupt, or the request failed). */
  lost: boolean;
}

/** One playback segment of the framework: the sentences of one reply (or one `say()`). */
interface Segment {
  utterances: Utterance[];
  /** `/speak` requests not answered yet. */
  unanswered: number;
  /** `flush()` came: every sentence of the segment has been captured. */
  inputDone: boolean;
  startedAt?: number;
  interrupt?: { answered: boolean; stillPlaying: boolean };
  done: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * The agent's audio output in text mode. It plays nothing: each marker frame's sentence is sent
 * to `/speak` (this runs at playout time, after the framework authorized the speech), and the
 * avatar's `lk.chat` messages drive `onPlaybackStarted`/`onPlaybackFinished`, so `agent_state`
 * stays `speaking` exactly as long as the avatar speaks.
 *
 * `clearBuffer()` is the single point every interruption goes through (VAD, STT,
 * `session.interrupt()`): it sends `/interrupt` at once and always finishes the pending segment,
 * reporting what the avatar really said as the synchronized transcript.
 */
export class VisageSpeechOutput extends voice.AudioOutput {
  readonly #queue: SessionCommandQueue;
  readonly #options: VisageSpeechOutputOptions;
  #segment?: Segment;
  /** `lk.chat` messages that arrived before the `/speak` answer naming their utterance. */
  readonly #early = new Map<string, AvatarChatMessage[]>();
  #warnedAudio = false;
  #warnedEnded = false;
  #closed = false;

  constructor(queue: SessionCommandQueue, options: VisageSpeechOutputOptions) {
    // No sample rate: the pipeline must not resample (resampled frames lose their userdata).
    // No pause: the avatar cannot pause, so barge-in interrupts instead.
    super(undefined, undefined, { pause: false });
    this.#queue = queue;
    this.#options = options;
  }

  override async captureFrame(frame: AudioFrame): Promise<void> {
    const before = this.capturedPlayoutSegments;
    await super.captureFrame(frame);
    if (this.capturedPlayoutSegments !== before || !this.#segment) this.#segment = newSegment();
    const segment = this.#segment;
    if (segment.done || segment.interrupt || this.#closed) return;
    const text = markerText(frame);
    if (text === undefined) {
      if (!this.#warnedAudio) {
        this.#warnedAudio = true;
        pluginLog().error(
          'text mode got synthesized audio, which the avatar cannot speak: the agent has a TTS ' +
            "of its own (use mode: 'audio'), or say() was given audio",
        );
      }
      return;
    }
    const utterance: Utterance = { text, heard: '', started: false, final: false, lost: false };
    segment.utterances.push(utterance);
    segment.unanswered++;
    this.#armWatchdog(segment);
    // Not awaited: the pipeline must keep forwarding while the request is on the wire.
    this.#queue.speak(text).then(
      (accepted) => {
        segment.unanswered--;
        if (!accepted) utterance.lost = true;
        else {
          utterance.id = accepted.utterance_id;
          const early = this.#early.get(accepted.utterance_id) ?? [];
          this.#early.delete(accepted.utterance_id);
          for (const message of early) this.handleAvatarChat(message);
        }
        this.#progress(segment);
      },
      (err: unknown) => {
        segment.unanswered--;
        utterance.lost = true;
        pluginLog().error({ err }, 'Visage /speak failed; the sentence is not spoken');
        this.#progress(segment);
      },
    );
  }

  override flush(): void {
    super.flush();
    const segment = this.#segment;
    if (!segment || segment.done) return;
    segment.inputDone = true;
    this.#progress(segment);
  }

  override clearBuffer(): void {
    const segment = this.#segment;
    if (!segment || segment.done || segment.interrupt) return;
    const interrupt = { answered: false, stillPlaying: false };
    segment.interrupt = interrupt;
    const answered = (stillPlaying: boolean) => {
      interrupt.answered = true;
      interrupt.stillPlaying = stillPlaying;
      this.#progress(segment);
    };
    this.#queue.interrupt().then(
      (result) => answered(result?.interrupted ?? false),
      (err: unknown) => {
        pluginLog().error({ err }, 'Visage /interrupt failed');
        answered(false);
      },
    );
    // Whatever happens on the wire, the framework gets its playback-finished soon.
    clearTimeout(segment.timer);
    segment.timer = setTimeout(() => this.#finish(segment, true), this.#options.interruptGraceMs);
    segment.timer.unref?.();
  }

  /** Feeds one `lk.chat` message of the avatar. */
  handleAvatarChat(message: AvatarChatMessage): void {
    const segment = this.#segment;
    if (!segment || segment.done) return;
    const utterance = message.utteranceId
      ? segment.utterances.find((u) => u.id === message.utteranceId)
      : segment.utterances.find((u) => !u.final && !u.lost);
    if (!utterance) {
      // Its /speak answer may still be on the way; anything else is stale (an earlier reply).
      if (message.utteranceId && segment.unanswered > 0 && this.#early.size < 64) {
        const list = this.#early.get(message.utteranceId) ?? [];
        list.push(message);
        this.#early.set(message.utteranceId, list);
      }
      return;
    }
    if (utterance.final) return;
    utterance.heard = message.text;
    utterance.started = true;
    if (message.final) utterance.final = true;
    if (segment.startedAt === undefined) {
      segment.startedAt = Date.now();
      // Once interrupted, a late start must not flip the agent to `speaking`; the start time
      // still tells the framework something was heard.
      if (!segment.interrupt) this.onPlaybackStarted(segment.startedAt);
    }
    this.#progress(segment);
  }

  /** Finishes whatever is pending (as interrupted) and ignores everything after. */
  close(): void {
    this.#closed = true;
    const segment = this.#segment;
    if (segment && !segment.done) this.#finish(segment, true);
  }

  /** Something happened for the segment: finish it if it is complete, else re-arm the watchdog. */
  #progress(segment: Segment): void {
    if (segment.done) return;
    const interrupt = segment.interrupt;
    if (interrupt) {
      const cutOff = segment.utterances.every((u) => u.final || u.lost || !u.started);
      if (interrupt.answered && (!interrupt.stillPlaying || cutOff)) this.#finish(segment, true);
      return;
    }
    const settled = segment.utterances.every((u) => u.final || u.lost);
    if (segment.inputDone && segment.unanswered === 0 && settled) {
      this.#finish(segment, false);
      return;
    }
    this.#armWatchdog(segment);
  }

  /** Restarts the silence clock while the segment waits on the avatar; stops it otherwise. */
  #armWatchdog(segment: Segment): void {
    clearTimeout(segment.timer);
    segment.timer = undefined;
    const waiting = segment.unanswered > 0 || segment.utterances.some((u) => !u.final && !u.lost);
    if (!waiting) return;
    segment.timer = setTimeout(() => {
      if (segment.done) return;
      pluginLog().warn(
        {
          timeout_ms: this.#options.playbackTimeoutMs,
          sentences: segment.utterances.length,
          finals: segment.utterances.filter((u) => u.final).length,
        },
        'the avatar stopped reporting playback; ending the segment and interrupting the avatar',
      );
      this.#queue.interrupt().catch(() => undefined);
      this.#finish(segment, true);
    }, this.#options.playbackTimeoutMs);
    segment.timer.unref?.();
  }

  #finish(segment: Segment, interrupted: boolean): void {
    if (segment.done) return;
    segment.done = true;
    clearTimeout(segment.timer);
    this.#early.clear();
    const heard = segment.utterances
      .map((u) => u.heard.trim())
      .filter(Boolean)
      .join(' ');
    const position = segment.startedAt === undefined ? 0 : (Date.now() - segment.startedAt) / 1000;
    // A sentence that never reached the avatar was not heard: the reply was cut short, and the
    // chat history must keep only what was heard (nothing at all once the session has ended).
    const unplayed = segment.utterances.some((u) => u.lost);
    if (unplayed && this.#queue.ended && !this.#warnedEnded) {
      this.#warnedEnded = true;
      pluginLog().warn(
        { session_id: this.#queue.sessionId },
        'the Visage session has ended on the service side: replies are not played and are ' +
          'saved in the chat history as interrupted, with only what was heard',
      );
    }
    this.onPlaybackFinished({
      playbackPosition: position,
      interrupted: interrupted || unplayed,
      synchronizedTranscript: heard,
    });
  }
}

function newSegment(): Segment {
  return { utterances: [], unanswered: 0, inputDone: false, done: false };
}
