// SPDX-License-Identifier: Apache-2.0
import type { FaceFrame, FaceMessage } from './faceStream.js';

/**
 * A reader's view of one `visage.face` stream: the `face` lines by time, with the stream's rule
 * applied. The sender writes the face a few ticks ahead of its sound, and sends times again when
 * what it sent turned out wrong (new audio was queued, speech was cut, the session was parked):
 * **a `face` line replaces every line received before it whose `t` is at or after its own.**
 * A renderer pushes every message of the stream and draws `at(now on the sender's clock)`.
 */
export class FaceTimeline {
  /** Ascending `t`. */
  private faces: FaceFrame[] = [];

  push(message: FaceMessage): void {
    if (message.type === 'start') {
      this.faces = [];
      return;
    }
    if (message.type !== 'face') return;
    let keep = this.faces.length;
    while (keep > 0 && this.faces[keep - 1]!.t >= message.t) keep--;
    this.faces.length = keep;
    this.faces.push(message);
  }

  /** The face in force at sender time `t`: the last line whose `t` it has reached. */
  at(t: number): FaceFrame | undefined {
    let lo = 0;
    let hi = this.faces.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.faces[mid]!.t <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : this.faces[lo - 1];
  }

  /** The lines in force, oldest first (what a recording of the stream shows). */
  lines(): readonly FaceFrame[] {
    return this.faces;
  }

  /** Forgets the lines before the one in force at `t` (a renderer that drew `t` needs no older). */
  forget(t: number): void {
    const current = this.at(t);
    if (current) this.faces = this.faces.slice(this.faces.indexOf(current));
  }
}
