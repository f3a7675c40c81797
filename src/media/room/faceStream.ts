// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import {
  encodeFaceMessage,
  FACE_STREAM_TOPIC,
  FACE_STREAM_VERSION,
  OCULUS_OF_VISAGE,
  type FaceMessage,
} from '@visage-avatar/client/api';
import type { MouthPose } from '../lipsync/index.js';
import type { TimedAtlasUrl } from '../mediaCore.js';
import type { FacePose } from '../render/index.js';

/** What the face stream needs of the room (rtc-node's LocalParticipant fits). */
export interface FaceStreamTransport {
  streamText(options: {
    topic: string;
    attributes: Record<string, string>;
  }): Promise<{ write(text: string): Promise<void>; close(): Promise<void> }>;
}

interface Writer {
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Batches of `face` lines waiting for the room beyond this are refused (`frames` answers false,
 * and the caller sends those times again later): a late pose is worth nothing, and a stalled room
 * must not pile up memory. Words, visemes and cuts are never dropped.
 */
const MAX_PENDING_BATCHES = 3;

const DAY_MS = 86_400_000;

/**
 * The atlas URL a stream started at `nowMs` (Unix) names: the one the service hands out that day,
 * the first good for a day more (as the create's was when it was signed), so a viewer joining a
 * long session never gets an expired one; past the last, the last.
 */
export function atlasUrlOn(
  urls: readonly TimedAtlasUrl[] | undefined,
  nowMs: number,
): string | undefined {
  if (!urls || urls.length === 0) return undefined;
  return (urls.find((u) => u.expires * 1000 >= nowMs + DAY_MS) ?? urls.at(-1)!).url;
}

/** One `face` line: the face at `tMs` (sender's clock), its pose and the mouth of that sound. */
export interface FaceLine {
  readonly tMs: number;
  readonly pose: FacePose;
  readonly mouth: MouthPose;
}

/**
 * A `client` mode session's face, out to the room as the text stream `visage.face`
 * (see the wire contract's faceStream.ts): a `start` line, then `face` lines in batches (one
 * write each, a few ticks ahead: a write per tick cost the room more than the lines), and the
 * words, visemes and cuts of its speech. `restart()` opens a new stream, so that a participant
 * who joined since reads one from its start. Every time is `wallMs(t)`: the sender's Unix clock.
 * Lines go out in order through one chain; a failed write is logged, never thrown.
 */
export class FaceStream {
  private writer: Promise<Writer | null> | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private pendingBatches = 0;
  /** Lines for the next write, and what to call once it is done. */
  private readonly pending: string[] = [];
  private readonly pendingDone: (() => void)[] = [];
  /** Inside `together`: lines wait for its end. */
  private gathering = 0;
  private closed = false;
  /** Lines and writes so far, for the bench and the tests. */
  lines = 0;
  writes = 0;

  constructor(
    private readonly room: FaceStreamTransport,
    private readonly start: {
      avatarId: string;
      width: number;
      height: number;
      fps: number;
      /**
       * Where a browser fetches the avatar's atlas, when the service has one: signed URLs by
       * expiry (mediaCore.ts), each stream naming the one of its day.
       */
      atlasUrls?: readonly TimedAtlasUrl[];
    },
    private readonly log: Logger,
  ) {}

  /** A new stream (closing the last one): its first line says what follows. */
  restart(nowMs: number): void {
    if (this.closed) return;
    const previous = this.writer;
    const writer = (this.writer = this.room
      .streamText({ topic: FACE_STREAM_TOPIC, attributes: { v: String(FACE_STREAM_VERSION) } })
      .catch((err: unknown) => {
        this.log.warn({ err }, 'could not open the face stream');
        return null;
      }));
    const atlasUrl = atlasUrlOn(this.start.atlasUrls, nowMs);
    this.enqueue(async () => {
      await (await previous)?.close();
      await (
        await writer
      )?.write(
        encodeFaceMessage({
          type: 'start',
          v: FACE_STREAM_VERSION,
          avatar_id: this.start.avatarId,
          width: this.start.width,
          height: this.start.height,
          fps: this.start.fps,
          ...(atlasUrl !== undefined ? { atlas_url: atlasUrl } : {}),
          t: round(nowMs),
        }),
      );
      this.writes++;
    });
  }

  /**
   * Several `face` lines in one write. False when refused (too many batches still waiting for the room, or no stream): nothing of
   * it was sent.
   */
  frames(lines: readonly FaceLine[]): boolean {
    if (lines.length === 0) return true;
    if (this.closed || !this.writer || this.pendingBatches >= MAX_PENDING_BATCHES) return false;
    this.pendingBatches++;
    this.add(
      lines.map((l) => encodeFaceMessage(faceMessage(l))),
      () => this.pendingBatches--,
    );
    return true;
  }

  words(
    utteranceId: string,
    words: readonly { text: string; startMs: number; endMs: number }[],
  ): void {
    if (words.length === 0) return;
    this.send({
      type: 'words',
      utterance_id: utteranceId,
      words: words.map((w) => ({ text: w.text, start: round(w.startMs), end: round(w.endMs) })),
    });
  }

  visemes(
    utteranceId: string,
    visemes: readonly { viseme: keyof typeof OCULUS_OF_VISAGE; startMs: number; endMs: number }[],
  ): void {
    if (visemes.length === 0) return;
    this.send({
      type: 'visemes',
      utterance_id: utteranceId,
      visemes: visemes.map((v) => ({
        viseme: OCULUS_OF_VISAGE[v.viseme],
        start: round(v.startMs),
        end: round(v.endMs),
      })),
    });
  }

  cut(tMs: number): void {
    this.send({ type: 'cut', t: round(tMs) });
  }

  /** Resolves once everything sent so far was handed to the room. */
  flushed(): Promise<unknown> {
    return this.chain;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const writer = this.writer;
    this.enqueue(async () => (await writer)?.close());
    await this.chain;
  }

  private send(message: FaceMessage): void {
    if (this.closed || !this.writer) return;
    this.add([encodeFaceMessage(message)]);
  }

  /**
   * Everything `fn` sends goes out in one write (a chunk's words and visemes: one packet for the
   * room, not two). Outside `together` each call is a write of its own, at once.
   */
  together(fn: () => void): void {
    this.gathering++;
    try {
      fn();
    } finally {
      this.gathering--;
      if (this.gathering === 0) this.flush();
    }
  }

  private add(lines: string[], done?: () => void): void {
    this.pending.push(...lines);
    if (done) this.pendingDone.push(done);
    if (this.gathering === 0) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const writer = this.writer;
    const lines = this.pending.splice(0);
    const done = this.pendingDone.splice(0);
    this.enqueue(async () => {
      try {
        await (await writer)?.write(lines.join(''));
        this.lines += lines.length;
        this.writes++;
      } finally {
        for (const d of done) d();
      }
    });
  }

  private enqueue(fn: () => Promise<unknown>): void {
    this.chain = this.chain
      .then(fn)
      .catch((err: unknown) => this.log.warn({ err }, 'could not write the face stream'));
  }
}

function faceMessage({ tMs, pose, mouth }: FaceLine): FaceMessage {
  return {
    type: 'face',
    t: round(tMs),
    viseme: mouth.viseme,
    open: round2(mouth.openness),
    oculus: mouth.openness > 0 ? OCULUS_OF_VISAGE[mouth.viseme] : 'sil',
    lid: round2(pose.lid),
    gaze: pose.gaze,
    sway: pose.sway,
    lift: round2(pose.lift),
    look: pose.look,
  };
}

/**
 * Times go out as whole ms: a tick is 40 ms, a jitter buffer tens of ms, so a tenth of a ms told a
 * reader nothing and cost two bytes a line (four a word or viseme), 2 % of the stream.
 */
const round = (ms: number) => Math.round(ms);
const round2 = (x: number) => Math.round(x * 100) / 100;
