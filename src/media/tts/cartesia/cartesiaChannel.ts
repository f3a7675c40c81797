// SPDX-License-Identifier: GPL-3.0-or-later
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { EspeakEngine } from '../espeakEngine.js';
import { ChunkTimings } from '../providers/chunkTimings.js';
import { MessageQueue } from '../providers/messageQueue.js';
import { Pcm16Decoder } from '../providers/pcm16.js';
import { providerReason } from '../providers/providerReason.js';
import { connectProviderSocket } from '../providers/providerSocket.js';
import { providerUrl } from '../providers/providerUrl.js';
import { speakRetryingUnheard } from '../providers/unheardRetry.js';
import { phonemize } from '../providers/wordPhonemes.js';
import { TtsProviderError, TtsProviderUnavailableError } from '../ttsProviderError.js';
import type { PhonemeTiming, SpeechChannel, SpeechChunk, WordTiming } from '../ttsEngine.js';
import type { CartesiaSettings } from './cartesiaEngine.js';

const SAMPLE_RATE = 24_000;

/** A server message on the TTS socket (docs.cartesia.ai, API reference, TTS WebSocket). */
interface CartesiaMessage {
  type: string;
  context_id?: string;
  done?: boolean;
  status_code?: number;
  data?: string;
  word_timestamps?: { words: string[]; start: number[]; end: number[] };
  phoneme_timestamps?: { phonemes: string[]; start: number[]; end: number[] };
  error?: string;
  message?: string;
  title?: string;
}

/** Words of a timestamps message placed in `text` from `cursor` on; returns the new cursor. */
function placeWords(
  text: string,
  cursor: number,
  ts: NonNullable<CartesiaMessage['word_timestamps']>,
  out: WordTiming[],
): number {
  ts.words.forEach((word, i) => {
    const at = text.indexOf(word, cursor);
    if (at < 0 || word === '') return;
    cursor = at + word.length;
    out.push({
      text: word,
      charStart: at,
      charEnd: cursor,
      startMs: (ts.start[i] ?? 0) * 1000,
      endMs: (ts.end[i] ?? ts.start[i] ?? 0) * 1000,
    });
  });
  return cursor;
}

/**
 * One session's Cartesia socket, opened when the session starts and reopened if it drops. Each
 * utterance is a context: its audio is yielded as it arrives with the word and phoneme
 * timestamps known by then; an interrupt sends `{context_id, cancel: true}`.
 */
export class CartesiaChannel implements SpeechChannel {
  private socket: Promise<WebSocket> | undefined;
  private readonly contexts = new Map<string, MessageQueue<CartesiaMessage>>();
  private closed = false;

  constructor(
    private readonly settings: CartesiaSettings,
    private readonly voiceId: string,
    /** Phonemizes the timed words when the model sends no phoneme timestamps. */
    private readonly phonemizer: EspeakEngine,
    private readonly log: Logger,
  ) {
    this.connect().catch((err: unknown) =>
      log.warn(
        { err: String(err) },
        'cartesia: could not open the session socket (retried on speak)',
      ),
    );
  }

  async *speak(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    if (text.trim() === '') return;
    // A context refused for the concurrency limit (an error message with status 429), an
    // overload (5xx) or a socket that dropped, before any audio: tried again, as a 429 at the
    // handshake is.
    yield* speakRetryingUnheard('cartesia', signal, this.log, () => this.speakOnce(text, signal));
  }

  close(): void {
    this.closed = true;
    void this.socket?.then(
      (ws) => ws.close(),
      () => undefined,
    );
    this.socket = undefined;
  }

  private async *speakOnce(text: string, signal: AbortSignal): AsyncGenerator<SpeechChunk> {
    const ws = await this.connect();
    if (signal.aborted) return;
    const contextId = randomUUID();
    const queue = new MessageQueue<CartesiaMessage>();
    this.contexts.set(contextId, queue);
    const onAbort = () => {
      if (ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ context_id: contextId, cancel: true }));
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const reading = phonemize(this.phonemizer, text);
    reading.catch(() => undefined);
    const timings = new ChunkTimings(reading);
    const pcm = new Pcm16Decoder();
    let cursor = 0;
    let yielded = false;
    try {
      ws.send(
        JSON.stringify({
          model_id: this.settings.modelId,
          transcript: text,
          voice: { mode: 'id', id: this.voiceId },
          language: 'en',
          context_id: contextId,
          output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: SAMPLE_RATE },
          add_timestamps: true,
          add_phoneme_timestamps: true,
          continue: false,
          max_buffer_delay_ms: 0,
        }),
      );
      for (;;) {
        const msg = await queue.next(signal);
        if (!msg) return;
        if (msg.type === 'chunk' && typeof msg.data === 'string') {
          const samples = pcm.decode(msg.data);
          if (samples.length > 0) {
            yielded = true;
            yield timings.chunk(samples, SAMPLE_RATE);
          }
        } else if (msg.type === 'timestamps' && msg.word_timestamps) {
          const words: WordTiming[] = [];
          cursor = placeWords(text, cursor, msg.word_timestamps, words);
          timings.addWords(words, true);
          // Timings come after their audio: hand them on now, not with the next audio. Words
          // alone wait while their phonemes may still come from the provider.
          const now = yielded && timings.hasProviderPhonemes && timings.pending(SAMPLE_RATE);
          if (now) yield now;
        } else if (msg.type === 'phoneme_timestamps' && msg.phoneme_timestamps) {
          const ts = msg.phoneme_timestamps;
          const phonemes: PhonemeTiming[] = ts.phonemes.map((ipa, i) => ({
            ipa,
            stressed: false,
            startMs: (ts.start[i] ?? 0) * 1000,
            endMs: (ts.end[i] ?? ts.start[i] ?? 0) * 1000,
          }));
          timings.addPhonemes(phonemes);
          const now = yielded && timings.pending(SAMPLE_RATE);
          if (now) yield now;
        } else if (msg.type === 'error' || msg.error !== undefined) {
          throw new TtsProviderError(
            'cartesia',
            msg.status_code,
            providerReason(JSON.stringify({ message: msg.message ?? msg.error ?? msg.title })),
          );
        } else if (msg.type === 'done' || msg.done === true) {
          const last = await timings.finish(SAMPLE_RATE);
          if (last && !signal.aborted) yield last;
          return;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.contexts.delete(contextId);
    }
  }

  private connect(): Promise<WebSocket> {
    if (this.closed) return Promise.reject(new Error('channel closed'));
    if (this.socket) return this.socket;
    const url = providerUrl(this.settings.baseUrl, '/tts/websocket', { socket: true });
    const opening = connectProviderSocket('cartesia', url, this.settings.headers);
    this.socket = opening;
    opening.then(
      (ws) => {
        ws.on('error', () => undefined);
        ws.on('message', (data: WebSocket.RawData) => this.route(data));
        ws.on('close', (code: number) => {
          if (this.socket === opening) this.socket = undefined;
          const lost = new TtsProviderUnavailableError('cartesia', `the socket closed (${code})`);
          for (const queue of this.contexts.values()) queue.fail(lost);
        });
        if (this.closed) ws.close();
      },
      () => {
        if (this.socket === opening) this.socket = undefined;
      },
    );
    return opening;
  }

  private route(data: WebSocket.RawData): void {
    let msg: CartesiaMessage;
    try {
      msg = JSON.parse(data.toString()) as CartesiaMessage;
    } catch {
      this.log.warn('cartesia: a message that is not JSON was ignored');
      return;
    }
    if (msg.context_id !== undefined) this.contexts.get(msg.context_id)?.push(msg);
  }
}
