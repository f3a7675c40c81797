import { CartesiaEngine } from './cartesia/cartesiaEngine.js';
import { ElevenLabsEngine } from './elevenlabs/elevenLabsEngine.js';
import { EspeakEngine } from './espeakEngine.js';
import { isTtsEngineId, TTS_ENGINE_IDS, type TtsEngine, type TtsEngineId } from './ttsEngine.js';

export class UnknownTtsEngineError extends Error {
  override readonly name = 'UnknownTtsEngineError';
  constructor(readonly engineId: string) {
    super(
      `unknown TTS engine "${engineId}" (VISAGE_TTS_ENGINE); available: ${TTS_ENGINE_IDS.join(', ')}`,
    );
  }
}

/** Thrown when an engine's settings are missing (e.g. no API key). */
export class TtsEngineUnavailableError extends Error {
  override readonly name = 'TtsEngineUnavailableError';
  constructor(
    readonly engineId: string,
    reason: string,
  ) {
    super(`TTS engine "${engineId}" is not available: ${reason}`);
  }
}

export const DEFAULT_TTS_ENGINE: TtsEngineId = 'espeak';

/**
 * The speech engines' settings by variable name (VISAGE_TTS_ENGINE, VISAGE_TTS_THREAD,
 * ELEVENLABS_*, CARTESIA_*), as the CLI read them from the environment; unset ones are absent.
 */
export type TtsSettings = Readonly<Record<string, string | undefined>>;

/** The engine `VISAGE_TTS_ENGINE` names (default espeak); throws UnknownTtsEngineError. */
export function defaultTtsEngineId(env: TtsSettings): TtsEngineId {
  const id = (env.VISAGE_TTS_ENGINE ?? '').trim().toLowerCase() || DEFAULT_TTS_ENGINE;
  if (!isTtsEngineId(id)) throw new UnknownTtsEngineError(id);
  return id;
}

function required(env: TtsSettings, engineId: TtsEngineId, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new TtsEngineUnavailableError(engineId, `${name} is not set`);
  return value;
}

/** The API key each cloning provider needs. */
const PROVIDER_KEYS: Partial<Record<TtsEngineId, string>> = {
  elevenlabs: 'ELEVENLABS_API_KEY',
  cartesia: 'CARTESIA_API_KEY',
};

/**
 * The default engine's settings, checked before anything starts (nothing is contacted): the
 * engine exists and a provider's key is set. Throws the errors `createTtsEngine` would.
 */
export function checkTtsSettings(env: TtsSettings): TtsEngineId {
  const id = defaultTtsEngineId(env);
  const key = PROVIDER_KEYS[id];
  if (key) required(env, id, key);
  return id;
}

/**
 * Creates an engine from its settings. espeak: `VISAGE_TTS_THREAD=inline` synthesizes
 * on the caller's thread (when sessions already run in worker threads); the default is one
 * shared synthesis thread. Providers: their API key (required), base URL and model.
 */
export function createTtsEngine(id: TtsEngineId, env: TtsSettings): TtsEngine {
  switch (id) {
    case 'espeak':
      return new EspeakEngine({ thread: env.VISAGE_TTS_THREAD === 'inline' ? 'inline' : 'worker' });
    case 'elevenlabs':
      return new ElevenLabsEngine({
        apiKey: required(env, id, PROVIDER_KEYS.elevenlabs!),
        baseUrl: env.ELEVENLABS_BASE_URL?.trim() || undefined,
        modelId: env.ELEVENLABS_MODEL?.trim() || undefined,
      });
    case 'cartesia':
      return new CartesiaEngine({
        apiKey: required(env, id, PROVIDER_KEYS.cartesia!),
        baseUrl: env.CARTESIA_BASE_URL?.trim() || undefined,
        modelId: env.CARTESIA_MODEL?.trim() || undefined,
      });
  }
}
