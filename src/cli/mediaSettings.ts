import { avatarVideoCodecFromEnv } from '../media/session/index.js';
import { checkTtsSettings } from '../media/tts/index.js';
import { UsageError } from './usage.js';

/**
 * Refuses to start, before anything else starts, when VISAGE_TTS_ENGINE names no engine or a
 * cloning provider without its API key (the key itself is checked against the provider later,
 * when the media core starts), or when VISAGE_VIDEO_CODEC names no codec.
 */
export function requireMediaSettings(env: NodeJS.ProcessEnv = process.env): void {
  try {
    checkTtsSettings(env);
    avatarVideoCodecFromEnv(env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
