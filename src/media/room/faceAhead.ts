// SPDX-License-Identifier: GPL-3.0-or-later
import type { MouthPose } from '../lipsync/index.js';
import type { ConversationCue, FaceMotion } from '../render/index.js';
import type { FaceLine, FaceStream } from './faceStream.js';

/** How many ticks of face go out in one write, ahead of the sound they belong to. */
export const FACE_BATCH_TICKS = 5;

export interface FaceAheadOptions {
  readonly motion: FaceMotion;
  readonly stream: FaceStream;
  /** The mouth of the sound leaving `aheadMs` from now (the audio pushed so far). */
  mouthIn(aheadMs: number): MouthPose;
  /**
   * While more audio is coming, how far ahead of now the mouth of the audio pushed so far is final
   * (0 once that has run out: the audio ran dry); undefined when none is coming. New lines go no
   * further than it then: the mouth of audio not yet pushed is not known, nor that of the audio's
   * last few ms (the mouth reads a little ahead of each time).
   */
  knownAheadMs?(): number | undefined;
  /** What else the face's life depends on, now. */
  state(): { parked: boolean; conversation: ConversationCue | undefined };
  /** The session's birth on `now()`'s clock: the face's motion time starts there. */
  readonly bornAt: number;
  /** `now()`'s clock as Unix ms (the stream's clock). */
  toEpochMs(nowMs: number): number;
  readonly fps: number;
  readonly now?: () => number;
}

/**
 * Client mode's face, sent ahead of its sound: every few ticks one write holds the face for the
 * next `FACE_BATCH_TICKS` ticks (the mouth of the audio already pushed, the idle life, which is a
 * function of time). A write per tick made the room forward 25 small packets a second per viewer,
 * which cost more than the lines.
 *
 * What was sent ahead can turn out wrong: audio was pushed after it was sent, speech was cut, the
 * session was parked. Every tick computes the mouth of the times sent ahead again and, from the
 * first that changed, sends them again (by the stream's rule a `face` line replaces every line
 * received before it whose `t` is at or after its own); `refresh` does the same at once, and
 * for a new stream sends them all.
 *
 * While more audio is coming, new lines reach no further than the mouth is final (at least a
 * tick): beyond the audio pushed it is not known yet, and a loaded machine pushes late (the audio
 * source's queue then runs below a batch). Sent as rest, those times were sent again once the
 * audio came: 1.45 lines per time beside two CPU hogs, a third of the stream's bytes. Nor is it
 * known in the audio's last 20 to 30 ms (the mouth reads 20 ms ahead, in 10 ms hops): lines sent
 * up to the audio's end were sent again at the next push. Otherwise (silence, or the last audio
 * pushed) the batch is whole, and so it is once the pushed audio has run dry for a batch while
 * more is said to be coming: a pause (an agent's own TTS keeps its audio stream open between
 * sentences), not a late push. Sent a tick at a time, a 2 s pause was 50 writes; sent whole, what
 * the next sentence changes is sent again (a batch at most).
 */
export class FaceAhead {
  private periodMs: number;
  /** The lines sent for times not yet passed, oldest first. */
  private ahead: FaceLine[] = [];
  /** `now()` time up to which lines were sent (exclusive). */
  private sentUntil = -Infinity;
  /** What a write the stream refused (too much waiting for the room) still owes: next tick. */
  private owed: { all: boolean; pose: boolean } = { all: false, pose: false };
  /** `now()` since when the audio pushed has run dry while more is said to be coming. */
  private drySince: number | undefined;
  private readonly now: () => number;

  constructor(private readonly o: FaceAheadOptions) {
    this.periodMs = 1000 / o.fps;
    this.now = o.now ?? (() => performance.now());
  }

  /** The frame clock's tick: times sent whose mouth changed, and a new batch once due. */
  tick(): void {
    this.update({ all: false, pose: false });
  }

  /**
   * At once rather than at the next tick: audio was queued or cut (`{}`), the face's life changed
   * (`pose`: parking), or a new stream began (`all`: every time ahead, changed or not).
   */
  refresh(options: { all?: boolean; pose?: boolean } = {}): void {
    this.update({ all: options.all === true, pose: options.pose === true });
  }

  /** The rate changed (parking): the next lines are spaced at the new period. */
  setFps(fps: number): void {
    this.periodMs = 1000 / fps;
  }

  private update(request: { all: boolean; pose: boolean }): void {
    const all = request.all || this.owed.all;
    const pose = request.pose || this.owed.pose;
    const now = this.now();
    this.drop(now);
    // Watched every tick, so a pause is told from a late push by how long the audio was dry.
    const known = this.o.knownAheadMs?.();
    if (known === undefined || known > 0) this.drySince = undefined;
    else this.drySince ??= now;
    const base = this.o.toEpochMs(0);
    const recomputed = this.ahead.map((l) =>
      pose ? this.line(l.tMs - base, now) : { ...l, mouth: this.o.mouthIn(l.tMs - base - now) },
    );
    let first = all || pose ? 0 : recomputed.findIndex((l, i) => !sameWire(l, this.ahead[i]!));
    if (first < 0) first = recomputed.length;
    const again = recomputed.slice(first);
    // Due once the lines sent run out within half a tick: a batch then starts at most half a tick
    // after it is written, nearly always at once. (Due within a whole tick, a batch started either
    // at once or nearly a tick later, as the ticks' lateness fell: a renderer that times the sound
    // by the batches' arrival could not tell which, 40 ms either way.)
    const due = this.sentUntil - now < this.periodMs / 2;
    if (again.length === 0 && !due) return;
    let t = Math.max(this.sentUntil, now);
    const fresh: FaceLine[] = [];
    const batchMs = FACE_BATCH_TICKS * this.periodMs;
    const pause = this.drySince !== undefined && now - this.drySince >= batchMs;
    const until =
      now +
      (known === undefined || pause ? batchMs : Math.max(this.periodMs, Math.min(batchMs, known)));
    for (; t < until; t += this.periodMs) fresh.push(this.line(t, now));
    if (!this.o.stream.frames([...again, ...fresh])) {
      this.owed = { all, pose };
      return;
    }
    this.owed = { all: false, pose: false };
    this.ahead = [...this.ahead.slice(0, first), ...again, ...fresh];
    this.sentUntil = Math.max(this.sentUntil, t);
  }

  private line(perfMs: number, now: number): FaceLine {
    const mouth = this.o.mouthIn(perfMs - now);
    const { parked, conversation } = this.o.state();
    const pose = this.o.motion.pose({
      timeMs: perfMs - this.o.bornAt,
      mouth,
      parked,
      conversation,
    });
    return { tMs: this.o.toEpochMs(perfMs), pose, mouth };
  }

  /** Forgets the lines whose time has passed: they cannot change any more. */
  private drop(now: number): void {
    const nowEpoch = this.o.toEpochMs(now);
    const i = this.ahead.findIndex((l) => l.tMs >= nowEpoch);
    this.ahead = i < 0 ? [] : this.ahead.slice(i);
  }
}

/** The same mouth as the stream writes it (viseme, openness to 0.01). */
function sameWire(a: FaceLine, b: FaceLine): boolean {
  return (
    a.mouth.viseme === b.mouth.viseme &&
    Math.round(a.mouth.openness * 100) === Math.round(b.mouth.openness * 100)
  );
}
