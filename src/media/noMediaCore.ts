import type { Logger } from 'pino';
import type { MediaCore, MediaSession, MediaSessionSpec } from './mediaCore.js';

/**
 * The media core used until the real one is wired in: sessions exist, are counted and can be
 * driven, but no avatar joins any room and nothing is spoken. It says so plainly in the log.
 */
export class NoMediaCore implements MediaCore {
  readonly kind = 'none';

  constructor(private readonly log: Logger) {
    log.warn('media core: none; sessions have no media yet (no avatar joins the room)');
  }

  async start(spec: MediaSessionSpec): Promise<MediaSession> {
    const log = this.log.child({ session_id: spec.sessionId });
    log.info('session has no media: nothing will be published to the room');
    return {
      speaking: false,
      speak: (item) => log.info({ utterance_id: item.utteranceId }, 'speak not played: no media'),
      playAudio: (item) =>
        log.info({ utterance_id: item.utteranceId }, 'audio not played: no media'),
      interrupt: () => ({ interrupted: false, droppedUtterances: 0 }),
      setWaiting: () => undefined,
      close: async () => undefined,
    };
  }

  async close(): Promise<void> {}
}
