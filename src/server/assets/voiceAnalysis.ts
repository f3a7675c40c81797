// SPDX-License-Identifier: GPL-3.0-or-later
import type { DecodedAudio } from '../../media/audio/index.js';
import {
  TtsProviderError,
  TtsProviderUnavailableError,
  type TtsEngines,
} from '../../media/tts/index.js';
import { analyzeVoiceClip as analyze } from '../../media/voice/index.js';
import { AssetError } from './assetError.js';
import { contentTypeOf, type VoiceAnalyzer } from './voiceClip.js';

/**
 * Makes a voice from a reference clip, once, when it is created: the clip is analysed, then the
 * default engine derives its voice from it (espeak calibrates; a provider clones). A provider's
 * refusal is 502 `tts_provider_error`, an unreachable provider 503 `tts_provider_unavailable`,
 * both with the provider's reason; nothing is stored then.
 */
export function voiceMaker(tts: TtsEngines): VoiceAnalyzer {
  return async (clip: DecodedAudio, bytes: Uint8Array, name: string) => {
    const analysis = await analyze(clip.mono, clip.sampleRate);
    const engine = tts.default;
    try {
      const profile = await engine.createVoice({
        name,
        analysis,
        clip: {
          bytes,
          contentType: contentTypeOf(clip.format),
          mono: clip.mono,
          sampleRate: clip.sampleRate,
        },
      });
      return { engine: engine.id, profile };
    } catch (err) {
      if (err instanceof TtsProviderError) throw new AssetError('tts_provider_error', err.message);
      if (err instanceof TtsProviderUnavailableError) {
        throw new AssetError('tts_provider_unavailable', err.message);
      }
      throw err;
    }
  };
}
