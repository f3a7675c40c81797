// SPDX-License-Identifier: GPL-3.0-or-later
import { REST_POSE, type MouthPose } from './viseme.js';
import { mouthPoseAt, type VisemeTimeline } from './visemeTimeline.js';

/** How fast the mouth closes after an interrupt cut the speech (time constant, ms). */
const CUT_CLOSE_MS = 40;
const CLOSED = 0.04;
/** `poseAt` forgets utterances that ended this long before the time asked for. */
const FORGET_AFTER_MS = 5000;

interface Placed {
  /** The utterance it belongs to: placing again for it replaces its timeline. */
  readonly id: string;
  timeline: VisemeTimeline;
  /** Playout time of the utterance's audio start (the timeline's 0 ms). */
  readonly startMs: number;
  /** Playout time after which this utterance was cut off (Infinity if never). */
  cutMs: number;
  /** The timeline describes the speech up to this time (utterance clock); rest after it. */
  untilMs: number;
}

/**
 * Viseme timelines of queued utterances placed on the playout clock, so that the renderer can ask
 * "what does the mouth do at playout time t" without knowing about utterances. Place each
 * utterance when its audio is queued (`startMs` = the playout time its first sample will be
 * heard); on an interrupt, `cut` at the playout position reached: later speech is dropped and the
 * mouth closes quickly from where it was.
 */
export class MouthSchedule {
  private placed: Placed[] = [];

  /**
   * Places utterance `id`'s timeline at playout time `startMs`. Placing the same utterance again
   * replaces its timeline (timings that arrive in pieces, the whole track rebuilt each time, so
   * the mouth glides across the pieces instead of closing between them). `untilMs` (ms from the
   * utterance's start) bounds what the timeline knows: words aligned to the audio heard so far
   * say nothing about the audio after it, so the schedule is silent (rest) there.
   */
  place(id: string, timeline: VisemeTimeline, startMs: number, untilMs = Infinity): void {
    const existing = this.placed.find((p) => p.id === id);
    if (existing) {
      existing.timeline = timeline;
      existing.untilMs = untilMs;
      return;
    }
    this.placed.push({ id, timeline, startMs, cutMs: Infinity, untilMs });
    this.placed.sort((a, b) => a.startMs - b.startMs);
  }

  /** Speech stops at playout time `atMs`: utterances starting later are dropped. */
  cut(atMs: number): void {
    this.placed = this.placed.filter((p) => p.startMs < atMs);
    for (const p of this.placed) p.cutMs = Math.min(p.cutMs, atMs);
  }

  /** Forget utterances whose mouth movement ended before `beforeMs`. */
  prune(beforeMs: number): void {
    this.placed = this.placed.filter((p) => this.endOf(p) >= beforeMs);
  }

  private endOf(p: Placed): number {
    return Math.min(p.startMs + p.timeline.endMs, p.cutMs + 500);
  }

  /**
   * The mouth at playout time `tMs`: the utterance being heard, else rest. Playout time only moves
   * forward, so utterances that ended more than a few seconds before `tMs` are forgotten here (a
   * long session does not accumulate them).
   */
  poseAt(tMs: number): MouthPose {
    if (this.placed.length > 0 && this.endOf(this.placed[0] as Placed) < tMs - FORGET_AFTER_MS) {
      this.prune(tMs - FORGET_AFTER_MS);
    }
    // Where one utterance's closing tail overlaps the next one's opening, the later one wins
    // as soon as its mouth moves.
    for (let i = this.placed.length - 1; i >= 0; i--) {
      const p = this.placed[i] as Placed;
      if (tMs - p.startMs >= p.untilMs) continue;
      const pose = tMs < p.cutMs ? mouthPoseAt(p.timeline, tMs - p.startMs) : this.closing(p, tMs);
      if (pose !== REST_POSE) return pose;
    }
    return REST_POSE;
  }

  private closing(p: Placed, tMs: number): MouthPose {
    const atCut = mouthPoseAt(p.timeline, p.cutMs - p.startMs);
    const openness = atCut.openness * Math.exp(-(tMs - p.cutMs) / CUT_CLOSE_MS);
    return openness < CLOSED ? REST_POSE : { viseme: atCut.viseme, openness };
  }

  get size(): number {
    return this.placed.length;
  }
}
