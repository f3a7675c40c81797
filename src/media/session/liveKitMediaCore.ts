import type { Logger } from 'pino';
import { AVATAR_CATALOGUE } from '../avatarCatalogue.js';
import {
  MediaUnavailableError,
  type MediaCore,
  type MediaSession,
  type MediaSessionObserver,
  type MediaSessionSpec,
} from '../mediaCore.js';
import { prepareAvatar } from '../render/index.js';
import { createTtsEngine, type TtsEngine } from '../tts/index.js';
import {
  VoiceProfileUnavailableError,
  voiceProfileFor,
  type VoiceProfile,
} from '../voice/index.js';
import { LiveKitMediaSession } from './liveKitMediaSession.js';

export interface LiveKitMediaCoreOptions {
  log: Logger;
  /** The TTS engine; default: the one `VISAGE_TTS_ENGINE` names (espeak). */
  engine?: TtsEngine;
  agentAbsenceMs?: number;
  connectTimeoutMs?: number;
}

/**
 * The real media core: each session is an avatar in a LiveKit room (the embedded server under
 * `visage dev`, a LiveKit deployment under `visage serve`).
 */
export class LiveKitMediaCore implements MediaCore {
  readonly kind = 'livekit';
  private engine: Promise<TtsEngine> | undefined;

  private constructor(private readonly o: LiveKitMediaCoreOptions) {}

  /** Builds the face atlases and the TTS engine up front, so the first session starts fast. */
  static async create(o: LiveKitMediaCoreOptions): Promise<LiveKitMediaCore> {
    const core = new LiveKitMediaCore(o);
    const started = performance.now();
    for (const avatar of AVATAR_CATALOGUE) prepareAvatar(avatar.avatarId);
    const engine = await core.ttsEngine();
    if ('warmUp' in engine && typeof engine.warmUp === 'function') await engine.warmUp();
    o.log.info(
      { engine: engine.id, ready_ms: Math.round(performance.now() - started) },
      'media core: livekit (avatars rendered, TTS ready)',
    );
    return core;
  }

  async start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession> {
    // The stock profile for a catalogue voice, else the validated stored one (throws if none).
    let voice: VoiceProfile;
    try {
      voice = voiceProfileFor(spec.voiceId, spec.voiceProfile);
    } catch (err) {
      if (!(err instanceof VoiceProfileUnavailableError)) throw err;
      throw new MediaUnavailableError(err.message, { cause: err });
    }
    return LiveKitMediaSession.start({
      spec,
      observer,
      engine: await this.ttsEngine(),
      voice,
      log: this.o.log.child({ session_id: spec.sessionId }),
      agentAbsenceMs: this.o.agentAbsenceMs ?? 10_000,
      connectTimeoutMs: this.o.connectTimeoutMs ?? 10_000,
    });
  }

  async close(): Promise<void> {
    const engine = await this.engine?.catch(() => undefined);
    // rtc-node's native runtime is process-wide: other cores in this process may still use it.
    await engine?.close?.();
  }

  private ttsEngine(): Promise<TtsEngine> {
    this.engine ??= this.o.engine ? Promise.resolve(this.o.engine) : createTtsEngine();
    return this.engine;
  }
}
