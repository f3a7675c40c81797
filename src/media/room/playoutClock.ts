// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Where the avatar's audio playout is, in ms of audio since the session started. Audio is pushed
 * ahead of playout (the AudioSource buffers a few hundred ms, paced natively); the clock models
 * playout as real time from the first push, capped at what was pushed, so it stops during
 * silence and restarts with the next push. Video frames take their mouth pose at `heardAt()`:
 * the frame shown at time t shows the sound heard at time t, and nothing once it has played out.
 *
 * Kept here rather than read from rtc-node: its `queuedDuration` is a JS estimate that
 * `clearQueue()` does not reset.
 */
export class PlayoutClock {
  private pushedMs = 0;
  private anchorPosMs = 0;
  private anchorWallMs: number;
  /** Where playout last restarted after a silence: a listener hears silence until it. */
  private restartPosMs = 0;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.anchorWallMs = now();
  }

  position(): number {
    return Math.min(this.pushedMs, this.runningPosition());
  }

  /** Where playout would be had it not stopped at the end of the pushed audio. */
  private runningPosition(): number {
    return this.anchorPosMs + (this.now() - this.anchorWallMs);
  }

  /**
   * Where on the timeline is the sound that a listener `latencyMs` behind playout hears now, or
   * null while they hear silence: once the pushed audio has played out to them (or was cut), and
   * until the audio that ended a silence reaches them. (Asked at `position()`, the mouth stayed
   * in the pose of the last sound until the next utterance: open after every reply, frozen
   * mid-word after an interrupt.)
   */
  heardAt(latencyMs: number): number | null {
    const t = this.runningPosition() - latencyMs;
    return t >= this.pushedMs || t < this.restartPosMs ? null : t;
  }

  /**
   * Where on the timeline is the sound that leaves `aheadMs` from now, or null if silence leaves
   * then: only pushed audio counts. It plays out natively whatever this thread does; audio not
   * yet pushed leaves when it is pushed, which a loaded machine does late (a face sent ahead from
   * it ran up to 400 ms ahead of the sound beside two CPU hogs). `leavingIn(0)` is `heardAt(0)`.
   */
  leavingIn(aheadMs: number): number | null {
    return this.heardAt(-aheadMs);
  }

  /**
   * When (on `now()`'s clock) the audio at `posMs` leaves: pushed audio by the running anchor,
   * audio about to be pushed as if pushed now (after a silence playout restarts with it).
   */
  wallAt(posMs: number): number {
    if (this.position() >= this.pushedMs) return this.now() + (posMs - this.pushedMs);
    return this.anchorWallMs + (posMs - this.anchorPosMs);
  }

  /** Audio pushed but not yet heard. */
  queuedMs(): number {
    return this.pushedMs - this.position();
  }

  /** End of everything pushed so far: where the next pushed audio will start playing. */
  get endMs(): number {
    return this.pushedMs;
  }

  /** Registers `durationMs` of audio handed to the sink; returns its playout start. */
  push(durationMs: number): number {
    const start = this.pushedMs;
    if (this.position() >= this.pushedMs) {
      // Playout had caught up (silence): it restarts now.
      this.anchorPosMs = this.restartPosMs = this.pushedMs;
      this.anchorWallMs = this.now();
    }
    this.pushedMs += durationMs;
    return start;
  }

  /** The queued audio was dropped (interrupt): playout ends where it is. Returns that position. */
  cut(): number {
    const at = this.position();
    this.pushedMs = at;
    this.anchorPosMs = at;
    this.anchorWallMs = this.now();
    return at;
  }
}
