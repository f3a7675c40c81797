import { checkTtsSettings, type TtsSettings } from '../media/tts/index.js';
import type { MediaSettings } from '../server/startMediaCore.js';
import type { Environment } from './environment.js';
import { UsageError } from './usage.js';

/**
 * The media's settings from the environment, checked before anything starts: a cloning provider
 * needs its API key (the key itself is checked against the provider later, when the media core
 * starts; the engine's and the codec's names were checked with the environment).
 */
export function mediaSettingsFrom(env: Environment): MediaSettings {
  const tts: TtsSettings = {
    VISAGE_TTS_ENGINE: env.VISAGE_TTS_ENGINE,
    VISAGE_TTS_THREAD: env.VISAGE_TTS_THREAD,
    ELEVENLABS_API_KEY: env.ELEVENLABS_API_KEY,
    ELEVENLABS_BASE_URL: env.ELEVENLABS_BASE_URL,
    ELEVENLABS_MODEL: env.ELEVENLABS_MODEL,
    CARTESIA_API_KEY: env.CARTESIA_API_KEY,
    CARTESIA_BASE_URL: env.CARTESIA_BASE_URL,
    CARTESIA_MODEL: env.CARTESIA_MODEL,
  };
  try {
    checkTtsSettings(tts);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return {
    videoCodec: env.VISAGE_VIDEO_CODEC,
    maxSessionsPerWorker: env.VISAGE_WORKER_MAX_SESSIONS,
    tts,
  };
}
