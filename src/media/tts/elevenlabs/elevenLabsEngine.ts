// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { EspeakEngine } from '../espeakEngine.js';
import { providerRequest } from '../providers/providerRequest.js';
import { providerUrl } from '../providers/providerUrl.js';
import { providerVoice, providerVoiceId } from '../providers/providerVoice.js';
import { TtsProviderError } from '../ttsProviderError.js';
import type { EngineVoiceRef, SpeechChannel, TtsEngine, VoiceSource } from '../ttsEngine.js';
import { ElevenLabsChannel } from './elevenLabsChannel.js';

export const ELEVENLABS_DEFAULT_BASE_URL = 'https://api.elevenlabs.io';
/** Flash v2.5: ElevenLabs' low-latency model (~75 ms to first audio). */
export const ELEVENLABS_DEFAULT_MODEL = 'eleven_flash_v2_5';

export interface ElevenLabsEngineOptions {
  apiKey: string;
  /** http(s) base URL (ELEVENLABS_BASE_URL); the socket URL is derived from it. */
  baseUrl?: string;
  /** ELEVENLABS_MODEL; default eleven_flash_v2_5. */
  modelId?: string;
}

export interface ElevenLabsSettings {
  baseUrl: string;
  modelId: string;
  headers: Record<string, string>;
}

/**
 * ElevenLabs: instant voice cloning from the reference clip (`POST /v1/voices/add`) and
 * streaming synthesis over `/v1/text-to-speech/{voice_id}/stream-input` (PCM, character
 * alignment; phonemes come from espeak-ng's reading of the same words). Clones the speaker's
 * identity.
 */
export class ElevenLabsEngine implements TtsEngine {
  readonly id = 'elevenlabs';
  private readonly settings: ElevenLabsSettings;
  /** Phonemizes the aligned words (off the event loop, on espeak's shared thread). */
  private readonly phonemizer = new EspeakEngine();

  constructor(opts: ElevenLabsEngineOptions) {
    this.settings = {
      baseUrl: opts.baseUrl ?? ELEVENLABS_DEFAULT_BASE_URL,
      modelId: opts.modelId ?? ELEVENLABS_DEFAULT_MODEL,
      headers: { 'xi-api-key': opts.apiKey },
    };
    providerUrl(this.settings.baseUrl, '/'); // fails early on a non-http(s) base URL
  }

  /** Checks the key with the provider (`GET /v1/user`) and warms the phonemizer. */
  async prepare(): Promise<void> {
    await Promise.all([
      providerRequest('elevenlabs', providerUrl(this.settings.baseUrl, '/v1/user'), {
        method: 'GET',
        headers: this.settings.headers,
      }),
      this.phonemizer.warmUp(),
    ]);
  }

  async createVoice(source: VoiceSource): Promise<unknown> {
    const answer = await providerRequest(
      'elevenlabs',
      providerUrl(this.settings.baseUrl, '/v1/voices/add'),
      {
        method: 'POST',
        headers: this.settings.headers,
        body: () => {
          const form = new FormData();
          form.set('name', source.name);
          form.append(
            'files',
            new Blob([new Uint8Array(source.clip.bytes)], { type: source.clip.contentType }),
            'clip',
          );
          return form;
        },
      },
    );
    const id = (answer as { voice_id?: unknown }).voice_id;
    if (typeof id !== 'string' || id === '') {
      throw new TtsProviderError('elevenlabs', undefined, 'the clone answer has no voice_id');
    }
    return providerVoice('elevenlabs', id);
  }

  openChannel(voice: EngineVoiceRef, log: Logger): SpeechChannel {
    return new ElevenLabsChannel(
      this.settings,
      providerVoiceId('elevenlabs', voice),
      this.phonemizer,
      log,
    );
  }

  async close(): Promise<void> {}
}
