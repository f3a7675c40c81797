// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { AVATAR_CATALOGUE, findAvatarByDesign } from '../avatarCatalogue.js';
import {
  MediaUnavailableError,
  type AvatarFaceSpec,
  type MediaAssets,
  type MediaCore,
  type MediaSession,
  type MediaSessionObserver,
  type MediaSessionSpec,
} from '../mediaCore.js';
import { PhotoAtlasCache } from '../photo/index.js';
import {
  createAtlasFaceRenderer,
  createFaceRenderer,
  prepareAvatarAsync,
  prepareAvatarCached,
  type CachedAtlasOutcome,
  type FaceRenderer,
} from '../render/index.js';
import { reportStep, type StartupProgress } from '../startupProgress.js';
import {
  EspeakEngine,
  isTtsEngineId,
  TtsEngineUnavailableError,
  TtsEngines,
  TtsProviderError,
  TtsProviderUnavailableError,
  VoiceUnavailableError,
  type SpeechChannel,
} from '../tts/index.js';
import { applyRtcNodeLogLevel } from '../../rtcNodeLog.js';
import { DEFAULT_STAGE_TIMEOUT_MS } from './roomAdmin.js';
import { DEFAULT_AVATAR_VIDEO_CODEC, type AvatarVideoCodec } from './avatarVideoCodec.js';
import { LiveKitMediaSession } from './liveKitMediaSession.js';
import { stopRtcNodeLogForwarding } from './rtcNodeLogForwarding.js';
import { espeakWords, type SpeakWords } from './wordsAlignment.js';

// rtc-node's own debug lines stay out of the service's output (see applyRtcNodeLogLevel).
applyRtcNodeLogLevel();
// Nor do libwebrtc's and the Rust crates' records cross into JavaScript: rtc-node drops them
// after decoding them, at the cost of most of a speaking avatar's JavaScript-thread CPU (see
// stopRtcNodeLogForwarding). Before anything here starts rtc-node.
stopRtcNodeLogForwarding();

export { DEFAULT_STAGE_TIMEOUT_MS };

export interface LiveKitMediaCoreOptions {
  log: Logger;
  /** The process's TTS engines; default: espeak alone. */
  tts?: TtsEngines;
  agentAbsenceMs?: number;
  /** Bound on each stage of a start (room set-up, join, each publish, first frame). */
  stageTimeoutMs?: number;
  /** Where the avatars' atlases are kept between runs; without it they are drawn every start. */
  cacheDir?: string;
  /** Told about each start-up step (avatars, TTS) as it starts and ends. */
  progress?: StartupProgress;
  /** Stored bytes (photo avatars' builds); without it only catalogue avatars can start. */
  assets?: MediaAssets;
  /** The avatars' video codec; default H.264. */
  videoCodec?: AvatarVideoCodec;
}

/**
 * The real media core: each session is an avatar in a LiveKit room (the embedded server under
 * `visage dev`, a LiveKit deployment under `visage serve`).
 */
export class LiveKitMediaCore implements MediaCore {
  readonly kind = 'livekit';
  private readonly tts: TtsEngines;
  private readonly sessions = new Map<string, MediaSession>();
  private readonly photos: PhotoAtlasCache | undefined;

  private readonly videoCodec: AvatarVideoCodec;
  /** Supplied audio's words, spoken by espeak-ng to align them (the process's espeak thread). */
  private readonly speakWords: SpeakWords = espeakWords(new EspeakEngine());

  private constructor(private readonly options: LiveKitMediaCoreOptions) {
    this.tts = options.tts ?? new TtsEngines();
    this.videoCodec = options.videoCodec ?? DEFAULT_AVATAR_VIDEO_CODEC;
    this.photos = options.assets ? new PhotoAtlasCache(options.assets) : undefined;
  }

  /**
   * Prepares the face atlases (from the cache when it has them) and the default TTS engine and
   * espeak (stock voices), all at once, so the first session starts fast. A provider whose key is
   * missing or refused fails here, loudly.
   */
  static async create(o: LiveKitMediaCoreOptions): Promise<LiveKitMediaCore> {
    const core = new LiveKitMediaCore(o);
    const started = performance.now();
    const [atlases] = await Promise.all([
      reportStep(
        o.progress,
        'avatars',
        `preparing ${AVATAR_CATALOGUE.length} avatar faces`,
        () => prepareAvatars(o),
        (atlases) => describeAtlases(atlases, o.cacheDir !== undefined),
      ),
      reportStep(o.progress, 'tts', 'warming up the speech engine', () => core.prepareTts()),
    ]);
    for (const a of atlases) {
      if (a.rejected) o.log.warn({ avatar_id: a.avatarId, why: a.rejected }, 'atlas cache rebuilt');
      if (a.storeError) {
        o.log.warn({ avatar_id: a.avatarId, err: a.storeError }, 'atlas cache not written');
      }
    }
    o.log.info(
      {
        engine: core.tts.defaultId,
        ready_ms: Math.round(performance.now() - started),
        atlases_from_cache: atlases.filter((a) => a.source === 'cache').length,
      },
      'media core: livekit (avatars ready, TTS ready)',
    );
    return core;
  }

  async start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession> {
    const log = this.options.log.child({ session_id: spec.sessionId });
    // The voice speaks with the engine that made it, whatever the default is now.
    let speech: SpeechChannel;
    try {
      if (!isTtsEngineId(spec.voiceEngine)) {
        throw new VoiceUnavailableError(
          `voice ${spec.voiceId} has unknown engine ${spec.voiceEngine}`,
        );
      }
      speech = this.tts
        .get(spec.voiceEngine)
        .openChannel({ voiceId: spec.voiceId, stored: spec.voiceProfile }, log);
    } catch (err) {
      if (err instanceof VoiceUnavailableError || err instanceof TtsEngineUnavailableError) {
        throw new MediaUnavailableError(err.message, { cause: err });
      }
      throw err;
    }
    let face: { renderer: FaceRenderer; release: () => void };
    try {
      face = await this.openFace(spec.avatar);
    } catch (err) {
      speech.close();
      throw err;
    }
    try {
      return await LiveKitMediaSession.start({
        spec,
        observer,
        speech,
        renderer: face.renderer,
        log,
        agentAbsenceMs: this.options.agentAbsenceMs ?? 10_000,
        stageTimeoutMs: this.options.stageTimeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS,
        videoCodec: this.videoCodec,
        speakWords: this.speakWords,
        lifecycle: {
          opened: (s) => this.sessions.set(spec.sessionId, s),
          closed: (s) => {
            if (this.sessions.get(spec.sessionId) === s) this.sessions.delete(spec.sessionId);
            face.release();
          },
        },
      });
    } catch (err) {
      speech.close();
      face.release();
      throw err;
    }
  }

  /**
   * The session's face: a catalogue design (atlases prepared at start), or a photo avatar's
   * build, loaded once and shared by every session that shows it.
   */
  private async openFace(
    avatar: AvatarFaceSpec,
  ): Promise<{ renderer: FaceRenderer; release: () => void }> {
    if (avatar.source === 'stock') {
      const stock = findAvatarByDesign(avatar.design);
      if (!stock) throw new MediaUnavailableError(`no face design ${avatar.design}`);
      return { renderer: createFaceRenderer(stock.avatarId), release: () => undefined };
    }
    if (!this.photos) {
      throw new MediaUnavailableError('this media core has no asset store for photo avatars');
    }
    try {
      const { atlas, release } = await this.photos.acquire(avatar.buildId);
      return { renderer: createAtlasFaceRenderer(atlas), release };
    } catch (err) {
      throw new MediaUnavailableError(
        `the photo avatar's build ${avatar.buildId} could not be loaded: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /** Photo atlases loaded now, by build id, with how many sessions use each. */
  photoAtlases(): Map<string, number> {
    return this.photos?.loaded() ?? new Map();
  }

  running(): ReadonlyMap<string, MediaSession> {
    return new Map(this.sessions);
  }

  async close(): Promise<void> {
    // rtc-node's native runtime is process-wide: other cores in this process may still use it.
    await this.tts.close();
  }

  private async prepareTts(): Promise<void> {
    try {
      await Promise.all([this.tts.get('espeak').prepare(), this.tts.default.prepare()]);
    } catch (err) {
      if (err instanceof TtsProviderError || err instanceof TtsProviderUnavailableError) {
        throw new Error(
          `TTS engine "${this.tts.defaultId}" (the default engine) failed its key check: ${err.message}`,
          { cause: err },
        );
      }
      throw err;
    }
  }
}

/** Each catalogue avatar's atlas, from the cache directory when one is given. */
async function prepareAvatars(o: LiveKitMediaCoreOptions): Promise<CachedAtlasOutcome[]> {
  const outcomes: CachedAtlasOutcome[] = [];
  for (const { avatarId } of AVATAR_CATALOGUE) {
    if (o.cacheDir) {
      outcomes.push(await prepareAvatarCached(avatarId, o.cacheDir));
    } else {
      const started = performance.now();
      await prepareAvatarAsync(avatarId);
      outcomes.push({ avatarId, source: 'built', ms: performance.now() - started });
    }
  }
  return outcomes;
}

function describeAtlases(outcomes: CachedAtlasOutcome[], caching: boolean): string {
  const cached = outcomes.filter((a) => a.source === 'cache').length;
  const built = outcomes.length - cached;
  if (built === 0) return `${cached} from cache`;
  const drawn = caching ? `${built} drawn and cached` : `${built} drawn`;
  return cached === 0 ? drawn : `${drawn}, ${cached} from cache`;
}
