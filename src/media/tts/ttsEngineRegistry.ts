// SPDX-License-Identifier: GPL-3.0-or-later
import { CartesiaEngine } from './cartesia/cartesiaEngine.js';
import { ElevenLabsEngine } from './elevenlabs/elevenLabsEngine.js';
import { EspeakEngine } from './espeakEngine.js';
import type { TtsEngine, TtsEngineId } from './ttsEngine.js';

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

/** A cloning provider's settings. */
export interface TtsProviderOptions {
  apiKey: string;
  /** http(s) base URL; the provider's own by default. */
  baseUrl?: string;
  /** The provider's model; a low-latency one by default. */
  modelId?: string;
}

/**
 * The speech engines' options, typed (the CLI reads them from the environment once, see
 * docs/configuration.md); plain data, so they travel to the media processes as they are.
 */
export interface TtsOptions {
  /** The engine new voices are made with; default espeak. */
  defaultEngine?: TtsEngineId;
  /**
   * Where espeak-ng synthesizes: on one shared thread (default), or on the caller's own thread
   * (when sessions already run off the main thread).
   */
  espeakOn?: 'thread' | 'caller';
  elevenlabs?: TtsProviderOptions;
  cartesia?: TtsProviderOptions;
}

function provider(options: TtsOptions, id: 'elevenlabs' | 'cartesia'): TtsProviderOptions {
  const given = options[id];
  if (!given?.apiKey.trim()) throw new TtsEngineUnavailableError(id, 'no API key was given');
  return given;
}

/**
 * The default engine's options, checked before anything starts (nothing is contacted): a
 * provider has its key. Throws the errors `createTtsEngine` would.
 */
export function checkTtsOptions(options: TtsOptions): TtsEngineId {
  const id = options.defaultEngine ?? DEFAULT_TTS_ENGINE;
  if (id !== 'espeak') provider(options, id);
  return id;
}

/** Creates an engine from its options; throws TtsEngineUnavailableError for a provider without its key. */
export function createTtsEngine(id: TtsEngineId, options: TtsOptions): TtsEngine {
  switch (id) {
    case 'espeak':
      return new EspeakEngine({ runsOn: options.espeakOn });
    case 'elevenlabs': {
      const { apiKey, baseUrl, modelId } = provider(options, id);
      return new ElevenLabsEngine({ apiKey, baseUrl, modelId });
    }
    case 'cartesia': {
      const { apiKey, baseUrl, modelId } = provider(options, id);
      return new CartesiaEngine({ apiKey, baseUrl, modelId });
    }
  }
}
