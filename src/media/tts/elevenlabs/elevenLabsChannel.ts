// SPDX-License-Identifier: GPL-3.0-or-later
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
import { phonemize, type Phonemized } from '../providers/wordPhonemes.js';
import { TtsProviderError, TtsProviderUnavailableError } from '../ttsProviderError.js';
import type { SpeechChannel, SpeechChunk } from '../ttsEngine.js';
import { WordAssembler, type ElevenLabsAlignment } from './elevenLabsAlignment.js';
import type { ElevenLabsSettings } from './elevenLabsEngine.js';

const SAMPLE_RATE = 24_000;

/**
 * Errors stream-input sends inside the open socket (then it closes 1008) that HTTP answers with
 * 429: the account's concurrency or rate limit, or the service too busy for now. Retried like a
 * 429 at the handshake.
 */
const BUSY_ERRORS = new Set(['too_many_concurrent_requests', 'rate_limit_exceeded', 'system_busy']);
/** Close codes of a line that went away, or of a server that asks to come back later. */
const LINE_LOST_CODES = new Set([1000, 1006, 1011, 1012, 1013]);

/** A server message on stream-input (elevenlabs.io docs, text-to-speech WebSocket). */
interface ElevenLabsMessage {
  audio?: string | null;
  isFinal?: boolean | null;
  alignment?: ElevenLabsAlignment | null;
  error?: string;
  message?: string;
}

/**
 * One session's line to ElevenLabs. stream-input serves one generation per socket (the end of
 * input closes it), so the channel always holds the next socket open and ready: an utterance
 * takes it and a fresh one is opened behind it, so no sentence pays the connection. An interrupt
 * closes the utterance's socket, which stops the generation.
 */
export class ElevenLabsChannel implements SpeechChannel {
  private ready: Promise<WebSocket> | undefined;
  private closed = false;

  constructor(
    private readonly settings: ElevenLabsSettings,
    private readonly voiceId: string,
    private readonly phonemizer: EspeakEngine,
    private readonly log: Logger,
  ) {
    this.prepareNext();
  }

  async *speak(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    if (text.trim() === '') return;
    const reading = phonemize(this.phonemizer, text);
    reading.catch(() => undefined);
    yield* speakRetryingUnheard('elevenlabs', signal, this.log, () =>
      this.speakOnce(text, reading, signal),
    );
  }

  /** One generation on one socket (stream-input serves one per socket). */
  private async *speakOnce(
    text: string,
    reading: Promise<Phonemized>,
    signal: AbortSignal,
  ): AsyncGenerator<SpeechChunk> {
    const ws = await this.take();
    const queue = new MessageQueue<ElevenLabsMessage>();
    ws.on('message', (data: WebSocket.RawData) => {
      try {
        queue.push(JSON.parse(data.toString()) as ElevenLabsMessage);
      } catch {
        this.log.warn('elevenlabs: a message that is not JSON was ignored');
      }
    });
    ws.on('close', (code: number, reason: Buffer) => {
      queue.fail(
        // The line went away (closed early, dropped, the server restarting or asking to come
        // back later); other codes carry a refusal.
        LINE_LOST_CODES.has(code)
          ? new TtsProviderUnavailableError('elevenlabs', `the socket closed (${code})`)
          : new TtsProviderError(
              'elevenlabs',
              undefined,
              `socket closed ${code}: ${providerReason(reason.toString())}`,
            ),
      );
    });
    const onAbort = () => ws.close(1000);
    signal.addEventListener('abort', onAbort, { once: true });
    const timings = new ChunkTimings(reading);
    const words = new WordAssembler(text);
    const pcm = new Pcm16Decoder();
    try {
      ws.send(JSON.stringify({ text: ' ' }));
      ws.send(JSON.stringify({ text: `${text} `, flush: true }));
      ws.send(JSON.stringify({ text: '' }));
      for (;;) {
        const msg = await queue.next(signal);
        if (!msg) return;
        if (msg.error !== undefined) {
          throw new TtsProviderError(
            'elevenlabs',
            BUSY_ERRORS.has(msg.error) ? 429 : undefined,
            `${msg.error}: ${providerReason(JSON.stringify({ message: msg.message ?? msg.error }))}`,
          );
        }
        if (msg.alignment) {
          // Characters come with their audio: their phonemes are known before it is heard (a
          // word's phonemes would only be known once the word is complete).
          const placed = words.push(msg.alignment, timings.emittedMs);
          timings.addWords(placed.words, false);
          timings.addChars(placed.chars);
        }
        if (msg.audio) {
          const samples = pcm.decode(msg.audio);
          if (samples.length > 0) yield timings.chunk(samples, SAMPLE_RATE);
        }
        if (msg.isFinal === true) {
          timings.addWords(words.flush(), false);
          const last = await timings.finish(SAMPLE_RATE);
          if (last && !signal.aborted) yield last;
          return;
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      ws.removeAllListeners('message');
      ws.removeAllListeners('close');
      ws.on('error', () => undefined);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
    }
  }

  close(): void {
    this.closed = true;
    void this.ready?.then(
      (ws) => ws.close(),
      () => undefined,
    );
    this.ready = undefined;
  }

  /** The ready socket (or a new one if it dropped), with the next one opening behind it. */
  private async take(): Promise<WebSocket> {
    const pending = this.ready ?? this.open();
    this.ready = undefined;
    let ws = await pending;
    if (ws.readyState !== WebSocket.OPEN) ws = await this.open();
    this.prepareNext();
    return ws;
  }

  private prepareNext(): void {
    if (this.closed) return;
    const next = this.open();
    this.ready = next;
    next.catch((err: unknown) => {
      if (this.ready === next) this.ready = undefined;
      this.log.warn(
        { err: String(err) },
        'elevenlabs: could not open the next socket (retried on speak)',
      );
    });
  }

  private async open(): Promise<WebSocket> {
    const url = providerUrl(
      this.settings.baseUrl,
      `/v1/text-to-speech/${encodeURIComponent(this.voiceId)}/stream-input`,
      {
        socket: true,
        query: {
          model_id: this.settings.modelId,
          output_format: `pcm_${SAMPLE_RATE}`,
          sync_alignment: 'true',
          inactivity_timeout: '180',
        },
      },
    );
    const ws = await connectProviderSocket('elevenlabs', url, this.settings.headers);
    ws.on('error', () => undefined);
    return ws;
  }
}
