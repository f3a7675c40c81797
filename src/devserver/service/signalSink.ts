// SPDX-License-Identifier: GPL-3.0-or-later
import { SignalResponse } from '@livekit/protocol';

/** Where a participant's signal messages go: the WebSocket of its current session. */
export interface SignalSink {
  send(message: SignalResponse['message']): void;
  /** Ends the signal connection (after any message already sent). */
  close(): void;
  /** Drops the connection without a goodbye, as a network failure would. */
  terminate(): void;
}

/** Messages kept for a participant whose signal dropped; older ones beyond this are dropped. */
const HELD_MESSAGES_LIMIT = 512;

/**
 * Where a participant's messages go while its signal connection is lost: they are kept (ICE
 * candidates, answers, updates), and handed to the connection that resumes it, so that a signal
 * loss in the middle of ICE does not strand the peer connections. Bounded: a participant that
 * never comes back is removed after the grace period anyway.
 */
export class HeldSignal implements SignalSink {
  private held: SignalResponse['message'][] = [];

  send(message: SignalResponse['message']): void {
    this.held.push(message);
    if (this.held.length > HELD_MESSAGES_LIMIT) this.held.shift();
  }

  /** What was held, in order, for the connection that resumes the participant. */
  take(): SignalResponse['message'][] {
    const held = this.held;
    this.held = [];
    return held;
  }

  close(): void {
    this.held = [];
  }

  terminate(): void {
    this.held = [];
  }
}
