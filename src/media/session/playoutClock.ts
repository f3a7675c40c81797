/**
 * Where the avatar's audio playout is, in ms of audio since the session started. Audio is pushed
 * ahead of playout (the AudioSource buffers a few hundred ms, paced natively); the clock models
 * playout as real time from the first push, capped at what was pushed, so it stops during
 * silence and restarts with the next push. Video frames take their mouth pose at `position()`:
 * the frame shown at time t shows the sound heard at time t.
 *
 * Kept here rather than read from rtc-node: its `queuedDuration` is a JS estimate that
 * `clearQueue()` does not reset.
 */
export class PlayoutClock {
  private pushedMs = 0;
  private anchorPosMs = 0;
  private anchorWallMs: number;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.anchorWallMs = now();
  }

  position(): number {
    return Math.min(this.pushedMs, this.anchorPosMs + (this.now() - this.anchorWallMs));
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
      this.anchorPosMs = this.pushedMs;
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
