// SPDX-License-Identifier: GPL-3.0-or-later
/** Where the player's 48 kHz mono audio goes (a LiveKit AudioSource in production). */
export interface AudioSink {
  /** Resolves when the sink has room for more (it paces the player in real time). */
  capture(pcm: Int16Array): Promise<void>;
  /** Drops everything queued, at once. */
  clear(): void;
}
