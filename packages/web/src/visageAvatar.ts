// SPDX-License-Identifier: Apache-2.0
import {
  FACE_STREAM_TOPIC,
  FaceTimeline,
  parseFaceMessages,
  type FaceMessage,
} from '@visage-avatar/client/face';
import type { RemoteParticipant, Room, TextStreamReader } from 'livekit-client';
import type { Atlas } from './atlas.js';
import { fetchAtlas } from './fetchAtlas.js';
import { drawnPose } from './drawnPose.js';
import { FaceComposer, type FacePose } from './faceComposer.js';
import { PlayoutClock, type ClockSource } from './playoutClock.js';

export interface VisageAvatarOptions {
  /** The page's room; create the avatar before `room.connect()` so the stream of your join is read. */
  room: Room;
  /** Where to draw; sized to the avatar (the `start` line's width and height). */
  canvas: HTMLCanvasElement;
  /** The avatar participant (or its identity); by default whoever sends `visage.face`. */
  participant?: RemoteParticipant | string;
  /** The session's `atlas_url` (used before the one the stream's `start` line carries). */
  atlasUrl?: string;
  /** How statistics are polled for the playout clock, ms (default 100). */
  statsIntervalMs?: number;
}

/** What the avatar drew last (for a page's diagnostics and tests). */
export interface DrawnFace {
  /** The line in force (after a cut: its mouth shut). */
  face: FacePose;
  /** The sender time drawn, and which estimate of the playout gave it. */
  senderMs: number;
  clock: Exclude<ClockSource, 'none'>;
}

/** Lines buffered of one stream chunk before a newline; beyond this the stream is dropped. */
const MAX_PENDING_CHARS = 1 << 16;

/**
 * Draws a Visage avatar of a `client` mode session on a canvas: reads the avatar's `visage.face`
 * text streams (the newest wins), fetches its atlas once (`start`'s `atlas_url`, cached by the
 * browser), and at every animation frame draws the face in force at the sender time of the sound
 * the page plays now (`PlayoutClock`). A `cut` shuts the mouth from its time on, at once.
 */
export class VisageAvatar {
  /** Resolves when the first face is drawn; rejects if the atlas cannot be loaded. */
  readonly ready: Promise<void>;
  /** The last frame drawn, undefined before the first. */
  drawn: DrawnFace | undefined;

  /** Where the sound the page plays is on the sender's clock (its parts: for diagnostics). */
  readonly clock = new PlayoutClock();
  private readonly context: CanvasRenderingContext2D;
  private timeline = new FaceTimeline();
  private stream = 0;
  private cutAt = -Infinity;
  /** The stream's `face` lines a second (its `start` says). */
  private fps = 25;
  private composer: FaceComposer | undefined;
  private image: ImageData | undefined;
  private atlasFor = '';
  private identity: string | undefined;
  private frameRequest = 0;
  private statsTimer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private settle!: { resolve: () => void; reject: (err: unknown) => void };

  constructor(private readonly options: VisageAvatarOptions) {
    const context = options.canvas.getContext('2d');
    if (!context) throw new Error('the canvas has no 2D context');
    this.context = context;
    const p = options.participant;
    this.identity = typeof p === 'string' ? p : p?.identity;
    this.ready = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.ready.catch(() => undefined); // a page that never awaits it is not an unhandled rejection
    options.room.registerTextStreamHandler(FACE_STREAM_TOPIC, (reader, from) =>
      this.read(reader, from.identity),
    );
    this.statsTimer = setInterval(() => void this.pollStats(), options.statsIntervalMs ?? 100);
    this.frameRequest = requestAnimationFrame(this.draw);
  }

  /** Stops drawing and reading; the canvas keeps the last frame. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.options.room.unregisterTextStreamHandler(FACE_STREAM_TOPIC);
    cancelAnimationFrame(this.frameRequest);
    clearInterval(this.statsTimer);
    this.settle.reject(new Error('closed'));
  }

  /** The atlas in use (after the first `start`). */
  get atlas(): Atlas | undefined {
    return this.composer?.atlas;
  }

  private read(reader: TextStreamReader, identity: string): void {
    if (this.closed || (this.identity !== undefined && identity !== this.identity)) return;
    const stream = ++this.stream;
    let pending = '';
    /** The latest `face` time of the stream so far. */
    let newest = -Infinity;
    void (async () => {
      for await (const chunk of reader) {
        if (this.closed || stream !== this.stream) return; // a newer stream took over
        pending += chunk;
        const end = pending.lastIndexOf('\n');
        if (end < 0) {
          if (pending.length > MAX_PENDING_CHARS) return;
          continue;
        }
        const messages = parseFaceMessages(pending.slice(0, end));
        pending = pending.slice(end + 1);
        for (const m of messages) this.take(m, identity);
        // A new batch is written when its first line is due within half a tick (nearly always at
        // once; a quarter tick is assumed): its arrival tells the transit. Not a chunk that starts
        // with times sent again: the first of those may be any of a batch's, up to five ticks ahead.
        const first = messages.find((m) => m.type === 'face');
        if (first && first.t > newest) this.clock.arrived(first.t - 250 / this.fps);
        for (const m of messages) if (m.type === 'face' && m.t > newest) newest = m.t;
      }
    })().catch(() => undefined); // the stream ends when the avatar or the page leaves
  }

  private take(message: FaceMessage, identity: string): void {
    if (message.type === 'start') {
      this.identity ??= identity;
      this.timeline = new FaceTimeline();
      this.cutAt = -Infinity;
      this.clock.resetArrivals();
      this.fps = message.fps;
      void this.loadAtlas(message);
      return;
    }
    if (message.type === 'cut') {
      this.cutAt = message.t;
      return;
    }
    this.timeline.push(message);
  }

  private async loadAtlas(start: Extract<FaceMessage, { type: 'start' }>): Promise<void> {
    if (this.atlasFor === start.avatar_id) return;
    this.atlasFor = start.avatar_id;
    // The page's own URL first: it came from the session, not from a participant's stream.
    const url = this.options.atlasUrl ?? start.atlas_url;
    try {
      if (!url) throw new Error("no atlas_url: pass the session's atlas_url as `atlasUrl`");
      const atlas = await fetchAtlas(url, { width: start.width, height: start.height });
      if (this.closed || this.atlasFor !== start.avatar_id) return;
      this.composer = new FaceComposer(atlas);
      this.image = new ImageData(
        this.composer.rgba as Uint8ClampedArray<ArrayBuffer>,
        atlas.width,
        atlas.height,
      );
      this.options.canvas.width = atlas.width;
      this.options.canvas.height = atlas.height;
    } catch (err) {
      this.atlasFor = '';
      this.settle.reject(err);
    }
  }

  private async pollStats(): Promise<void> {
    const participant =
      this.identity === undefined
        ? undefined
        : this.options.room.remoteParticipants.get(this.identity);
    if (!participant) return;
    for (const publication of participant.audioTrackPublications.values()) {
      const receiver = publication.track?.receiver;
      if (!receiver) continue;
      this.clock.fromStats(await receiver.getStats());
      this.clock.fromSources(receiver.getSynchronizationSources());
    }
  }

  private readonly draw = (): void => {
    if (this.closed) return;
    this.frameRequest = requestAnimationFrame(this.draw);
    const { composer, image } = this;
    const senderMs = this.clock.now();
    if (!composer || !image || senderMs === undefined) return;
    const pose = drawnPose(this.timeline, senderMs, this.cutAt);
    if (!pose) return;
    if (composer.compose(pose) || !this.drawn) this.context.putImageData(image, 0, 0);
    const first = !this.drawn;
    this.drawn = { face: pose, senderMs, clock: this.clock.source as DrawnFace['clock'] };
    if (first) this.settle.resolve();
    // Keep two seconds drawn: the clock steps back when the jitter buffer grows.
    this.timeline.forget(senderMs - 2_000);
  };
}
