// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A drift-free frame clock: runs `frame()` every 1000/fps ms on a schedule anchored to its start
 * (a late frame does not push the later ones back). The rate can change on the fly (parking),
 * and the clock can be paused (nobody watches the video) and resumed with a frame at once.
 */
export class VideoLoop {
  private timer: NodeJS.Timeout | undefined;
  private periodMs: number;
  private next = 0;
  private stopped = false;
  private started = false;
  private paused = false;

  constructor(
    fps: number,
    private readonly frame: () => void,
  ) {
    this.periodMs = 1000 / fps;
  }

  start(): void {
    this.started = true;
    if (this.paused) return;
    this.next = performance.now();
    this.loop();
  }

  get running(): boolean {
    return this.started && !this.paused && !this.stopped;
  }

  setFps(fps: number): void {
    this.periodMs = 1000 / fps;
    // Re-anchor: the new rate starts now.
    clearTimeout(this.timer);
    this.next = performance.now();
    if (!this.stopped && this.started && !this.paused) this.loop();
  }

  /** No frames until resume(). */
  pause(): void {
    this.paused = true;
    clearTimeout(this.timer);
  }

  /** Frames again, the first one now. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.started && !this.stopped) {
      this.next = performance.now();
      this.loop();
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private loop = (): void => {
    if (this.stopped || this.paused) return;
    this.frame();
    const now = performance.now();
    this.next += this.periodMs;
    // Far behind (a stalled event loop): skip the missed frames instead of bursting them.
    if (this.next < now - this.periodMs) this.next = now;
    this.timer = setTimeout(this.loop, Math.max(0, this.next - now));
  };
}
