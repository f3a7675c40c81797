// SPDX-License-Identifier: GPL-3.0-or-later
import type { MediaCore, MediaSession, MediaSessionSpec } from '../../src/media/mediaCore.js';

export interface DetachedMediaOptions {
  /**
   * Runs before a start completes; a test makes a start slow (a promise it resolves later) or
   * hang (one that never settles). The session counts as running from the start call on.
   */
  beforeStart?: (spec: MediaSessionSpec) => Promise<void>;
  /** Runs before a close completes (a slow teardown); the session runs until it is over. */
  beforeClose?: () => Promise<void>;
}

/**
 * Test double at the media seam for the HTTP-layer suites: sessions are created, counted,
 * driven and ended through the real server and database, but nothing joins a room. The real
 * media core is exercised end to end in test/media/room/ (real WebRTC in the namespace).
 */
export class DetachedMediaCore implements MediaCore {
  readonly kind = 'detached';
  private readonly sessions = new Map<string, MediaSession>();

  constructor(private readonly options: DetachedMediaOptions = {}) {}

  async start(spec: MediaSessionSpec): Promise<MediaSession> {
    const session: MediaSession = {
      speaking: false,
      speak: () => undefined,
      playAudio: () => undefined,
      interrupt: () => ({ interrupted: false, droppedUtterances: 0 }),
      setWaiting: () => undefined,
      close: async () => {
        await this.options.beforeClose?.();
        if (this.sessions.get(spec.sessionId) === session) this.sessions.delete(spec.sessionId);
      },
    };
    this.sessions.set(spec.sessionId, session);
    await this.options.beforeStart?.(spec);
    return session;
  }

  running(): ReadonlyMap<string, MediaSession> {
    return new Map(this.sessions);
  }

  async close(): Promise<void> {}
}
