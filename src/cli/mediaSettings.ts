// SPDX-License-Identifier: GPL-3.0-or-later
import { checkTtsOptions, type TtsOptions, type TtsProviderOptions } from '../media/tts/index.js';
import type { MediaSettings } from '../server/startMediaCore.js';
import type { Environment } from './environment.js';
import { UsageError } from './usage.js';

/** A provider's options from its variables; none without an API key. */
function provider(
  apiKey: string | undefined,
  baseUrl: string | undefined,
  modelId: string | undefined,
): TtsProviderOptions | undefined {
  if (!apiKey?.trim()) return undefined;
  return {
    apiKey: apiKey.trim(),
    baseUrl: baseUrl?.trim() || undefined,
    modelId: modelId?.trim() || undefined,
  };
}

/** The variable that holds each cloning provider's key, for the message when it is missing. */
const KEY_VARIABLE = { elevenlabs: 'ELEVENLABS_API_KEY', cartesia: 'CARTESIA_API_KEY' } as const;

/**
 * The media's settings from the environment, read here once into typed options and checked
 * before anything starts: a cloning provider needs its API key (the key itself is checked
 * against the provider later, when the media core starts; the engine's and the codec's names
 * were checked with the environment).
 */
export function mediaSettingsFrom(env: Environment): MediaSettings {
  const tts: TtsOptions = {
    defaultEngine: env.VISAGE_TTS_ENGINE,
    espeakOn: env.VISAGE_TTS_THREAD === 'inline' ? 'caller' : 'thread',
    elevenlabs: provider(env.ELEVENLABS_API_KEY, env.ELEVENLABS_BASE_URL, env.ELEVENLABS_MODEL),
    cartesia: provider(env.CARTESIA_API_KEY, env.CARTESIA_BASE_URL, env.CARTESIA_MODEL),
  };
  try {
    checkTtsOptions(tts);
  } catch (err) {
    const engine = tts.defaultEngine;
    const variable = engine && engine !== 'espeak' ? KEY_VARIABLE[engine] : undefined;
    throw new UsageError(
      variable
        ? `TTS engine "${engine}" is not available: ${variable} is not set`
        : (err as Error).message,
    );
  }
  return {
    videoCodec: env.VISAGE_VIDEO_CODEC,
    maxSessionsPerProcess: env.VISAGE_MEDIA_PROCESS_MAX_SESSIONS,
    tts,
  };
}
