import { EspeakEngine } from './espeakEngine.js';
import type { TtsEngine } from './ttsEngine.js';

/**
 * TTS engines selected by configuration: `VISAGE_TTS_ENGINE` (default `espeak`). Additional
 * engines register a factory under their id; a factory gets the environment so it can read its
 * own settings (API keys, model directories) and should throw TtsEngineUnavailableError when they
 * are missing.
 */
export type TtsEngineFactory = (env: NodeJS.ProcessEnv) => TtsEngine | Promise<TtsEngine>;

export class UnknownTtsEngineError extends Error {
  override readonly name = 'UnknownTtsEngineError';
  constructor(
    readonly engineId: string,
    readonly available: readonly string[],
  ) {
    super(
      `unknown TTS engine "${engineId}" (VISAGE_TTS_ENGINE); available: ${available.join(', ')}`,
    );
  }
}

export class TtsEngineUnavailableError extends Error {
  override readonly name = 'TtsEngineUnavailableError';
  constructor(
    readonly engineId: string,
    reason: string,
  ) {
    super(`TTS engine "${engineId}" is not available: ${reason}`);
  }
}

export const DEFAULT_TTS_ENGINE = 'espeak';

const factories = new Map<string, TtsEngineFactory>([
  // VISAGE_TTS_THREAD=inline synthesizes on the caller's thread (when sessions already run in
  // worker threads); the default is one shared synthesis thread.
  [
    'espeak',
    (env) => new EspeakEngine({ thread: env.VISAGE_TTS_THREAD === 'inline' ? 'inline' : 'worker' }),
  ],
]);

// Engines the design plans for but this build does not contain. Naming them gives an operator a
// precise answer instead of "unknown engine".
const PLANNED: Record<string, string> = {
  elevenlabs: 'hosted cloning engine planned; this build has no ElevenLabs adapter',
  cartesia: 'hosted cloning engine planned; this build has no Cartesia adapter',
  'sherpa-onnx':
    'local neural engine planned (operator-supplied model files); this build has no adapter',
};

export function registerTtsEngine(id: string, factory: TtsEngineFactory): void {
  factories.set(id, factory);
}

export function registeredTtsEngines(): string[] {
  return [...factories.keys()];
}

/** Create the engine named by `engineId`, else `env.VISAGE_TTS_ENGINE`, else espeak. */
export async function createTtsEngine(
  engineId?: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TtsEngine> {
  const id = (engineId ?? env.VISAGE_TTS_ENGINE ?? DEFAULT_TTS_ENGINE).trim().toLowerCase();
  const factory = factories.get(id || DEFAULT_TTS_ENGINE);
  if (factory) return factory(env);
  const planned = PLANNED[id];
  if (planned) throw new TtsEngineUnavailableError(id, planned);
  throw new UnknownTtsEngineError(id, registeredTtsEngines());
}
