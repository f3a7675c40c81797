// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { EspeakEngine } from '../espeakEngine.js';
import { providerRequest } from '../providers/providerRequest.js';
import { providerUrl } from '../providers/providerUrl.js';
import { providerVoice, providerVoiceId } from '../providers/providerVoice.js';
import { TtsProviderError } from '../ttsProviderError.js';
import type { EngineVoiceRef, SpeechChannel, TtsEngine, VoiceSource } from '../ttsEngine.js';
import { CartesiaChannel } from './cartesiaChannel.js';

export const CARTESIA_DEFAULT_BASE_URL = 'https://api.cartesia.ai';
/** Sent as the `Cartesia-Version` header on every request and socket. */
export const CARTESIA_API_VERSION = '2025-04-16';
export const CARTESIA_DEFAULT_MODEL = 'sonic-2';

export interface CartesiaEngineOptions {
  apiKey: string;
  /** http(s) base URL (CARTESIA_BASE_URL); the socket URL is derived from it. */
  baseUrl?: string;
  /** CARTESIA_MODEL; default sonic-2 (low latency). */
  modelId?: string;
}

export interface CartesiaSettings {
  baseUrl: string;
  modelId: string;
  headers: Record<string, string>;
}

/**
 * Cartesia: instant cloning from the reference clip (`POST /voices/clone`) and streaming
 * synthesis over one WebSocket per session (`/tts/websocket`, a `context_id` per utterance,
 * word and phoneme timestamps, raw PCM, `cancel` on interrupt). Clones the speaker's identity.
 */
export class CartesiaEngine implements TtsEngine {
  readonly id = 'cartesia';
  private readonly settings: CartesiaSettings;
  /** Phonemizes timed words when a model sends no phoneme timestamps. */
  private readonly phonemizer = new EspeakEngine();

  constructor(opts: CartesiaEngineOptions) {
    this.settings = {
      baseUrl: opts.baseUrl ?? CARTESIA_DEFAULT_BASE_URL,
      modelId: opts.modelId ?? CARTESIA_DEFAULT_MODEL,
      headers: {
        Authorization: `Bearer ${opts.apiKey}`,
        'Cartesia-Version': CARTESIA_API_VERSION,
      },
    };
    providerUrl(this.settings.baseUrl, '/'); // fails early on a non-http(s) base URL
  }

  /** Checks the key with the provider (lists one voice). */
  async prepare(): Promise<void> {
    await Promise.all([
      providerRequest(
        'cartesia',
        providerUrl(this.settings.baseUrl, '/voices', { query: { limit: '1' } }),
        { method: 'GET', headers: this.settings.headers },
      ),
      this.phonemizer.warmUp(),
    ]);
  }

  async createVoice(source: VoiceSource): Promise<unknown> {
    const answer = await providerRequest(
      'cartesia',
      providerUrl(this.settings.baseUrl, '/voices/clone'),
      {
        method: 'POST',
        headers: this.settings.headers,
        body: () => {
          const form = new FormData();
          form.set(
            'clip',
            new Blob([new Uint8Array(source.clip.bytes)], { type: source.clip.contentType }),
            'clip',
          );
          form.set('name', source.name);
          form.set('language', 'en');
          return form;
        },
      },
    );
    const id = (answer as { id?: unknown }).id;
    if (typeof id !== 'string' || id === '') {
      throw new TtsProviderError('cartesia', undefined, 'the clone answer has no voice id');
    }
    return providerVoice('cartesia', id);
  }

  openChannel(voice: EngineVoiceRef, log: Logger): SpeechChannel {
    return new CartesiaChannel(
      this.settings,
      providerVoiceId('cartesia', voice),
      this.phonemizer,
      log,
    );
  }

  async close(): Promise<void> {}
}
