import type { MediaCore, MediaSession } from '../../src/media/mediaCore.js';

/**
 * Test double at the media seam for the HTTP-layer suites: sessions are created, counted,
 * driven and ended through the real server and database, but nothing joins a room. The real
 * media core is exercised end to end in test/media/session/ (real WebRTC in the namespace).
 */
export class DetachedMediaCore implements MediaCore {
  readonly kind = 'detached';

  async start(): Promise<MediaSession> {
    return {
      speaking: false,
      speak: () => undefined,
      playAudio: () => undefined,
      interrupt: () => ({ interrupted: false, droppedUtterances: 0 }),
      setWaiting: () => undefined,
      close: async () => undefined,
    };
  }

  async close(): Promise<void> {}
}
