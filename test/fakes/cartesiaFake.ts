// SPDX-License-Identifier: GPL-3.0-or-later
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { fakeSpeech, lagTimings, pcmBase64 } from './fakeSpeech.js';
import { FakeProvider, multipartParts, sleep, type FakeRequestLog } from './fakeProvider.js';

export interface CartesiaGeneration {
  contextId: string;
  transcript: string;
  request: Record<string, unknown>;
  chunksSent: number;
  cancelled: boolean;
  done: boolean;
  /** performance.now() when the first chunk was sent. */
  firstChunkAt: number | null;
}

/**
 * A protocol-faithful fake of Cartesia (docs.cartesia.ai: POST /voices/clone, GET /voices,
 * WebSocket /tts/websocket with context ids, timestamps, phoneme timestamps and cancel). Audio
 * is real espeak-ng speech at the requested rate, with its real word and phoneme timings.
 */
export class CartesiaFake extends FakeProvider {
  readonly clones: { name: string; clipBytes: number; language: string | null }[] = [];
  readonly generations: CartesiaGeneration[] = [];
  /** The next this many generation requests get a 429 error message on the open socket. */
  rateLimitedGenerations = 0;
  /** How many such errors were sent. */
  rateLimitedSent = 0;
  /** The next this many generation requests get an overload error message (`overloadStatus`). */
  overloadedGenerations = 0;
  overloadStatus = 503;
  /** How many such errors were sent. */
  overloadedSent = 0;

  constructor(apiKey = 'cartesia-test-key') {
    // Both documented ways: `Authorization: Bearer <key>` (current docs) and `X-API-Key`.
    super(apiKey, (req) => {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      return bearer ?? (req.headers['x-api-key'] as string | undefined);
    });
  }

  /** Every request and socket names the API version (header, or `cartesia_version` on sockets). */
  protected override handshakeRefusal(req: IncomingMessage) {
    const query = new URL(req.url ?? '/', 'http://fake').searchParams.get('cartesia_version');
    if (req.headers['cartesia-version'] || query) return undefined;
    return { status: 400, body: JSON.stringify({ error: 'Cartesia-Version header is required' }) };
  }

  protected async route(req: FakeRequestLog): Promise<{ status: number; json: unknown }> {
    const path = new URL(req.path, 'http://fake').pathname;
    if (req.method === 'GET' && path === '/voices')
      return { status: 200, json: { data: [], has_more: false } };
    if (req.method === 'POST' && path === '/voices/clone') {
      const parts = await multipartParts(req);
      const clip = parts.find((p) => p.name === 'clip' && p.filename !== null);
      const name = parts.find((p) => p.name === 'name')?.value.toString();
      if (!clip || !name) return { status: 400, json: { error: 'clip and name are required' } };
      this.clones.push({
        name,
        clipBytes: clip.value.length,
        language: parts.find((p) => p.name === 'language')?.value.toString() ?? null,
      });
      const id = `cartesia-voice-${this.clones.length}`;
      return {
        status: 200,
        json: { id, name, language: 'en', created_at: new Date().toISOString() },
      };
    }
    return { status: 404, json: { error: 'not found' } };
  }

  protected onSocket(ws: WebSocket): void {
    const live = new Map<string, CartesiaGeneration>();
    ws.on('message', (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as Record<string, unknown>;
      const contextId = String(msg.context_id ?? '');
      if (msg.cancel === true) {
        const g = live.get(contextId);
        if (g) g.cancelled = true;
        return;
      }
      const format = msg.output_format as {
        container?: string;
        encoding?: string;
        sample_rate?: number;
      };
      const voice = msg.voice as { mode?: string; id?: string } | undefined;
      const known = this.clones.some((_, i) => voice?.id === `cartesia-voice-${i + 1}`);
      if (
        !contextId ||
        typeof msg.transcript !== 'string' ||
        typeof msg.model_id !== 'string' ||
        voice?.mode !== 'id' ||
        !known ||
        format?.container !== 'raw' ||
        format.encoding !== 'pcm_s16le' ||
        typeof format.sample_rate !== 'number'
      ) {
        ws.send(
          JSON.stringify({
            type: 'error',
            done: true,
            status_code: 400,
            context_id: contextId,
            error: 'invalid request',
          }),
        );
        return;
      }
      if (this.rateLimitedGenerations > 0) {
        // Cartesia's concurrency limit: an error on the open socket, for this context only.
        this.rateLimitedGenerations--;
        this.rateLimitedSent++;
        ws.send(
          JSON.stringify({
            type: 'error',
            done: true,
            status_code: 429,
            context_id: contextId,
            error: 'concurrency limit reached',
          }),
        );
        return;
      }
      if (this.overloadedGenerations > 0) {
        // The service is overloaded: an error for this context, with a 5xx status.
        this.overloadedGenerations--;
        this.overloadedSent++;
        ws.send(
          JSON.stringify({
            type: 'error',
            done: true,
            status_code: this.overloadStatus,
            context_id: contextId,
            error: 'the service is overloaded; try again shortly',
          }),
        );
        return;
      }
      const g: CartesiaGeneration = {
        contextId,
        transcript: msg.transcript,
        request: msg,
        chunksSent: 0,
        cancelled: false,
        done: false,
        firstChunkAt: null,
      };
      live.set(contextId, g);
      this.generations.push(g);
      void this.generate(
        ws,
        g,
        format.sample_rate,
        msg.add_timestamps === true,
        msg.add_phoneme_timestamps === true,
      );
    });
  }

  private async generate(
    ws: WebSocket,
    g: CartesiaGeneration,
    sampleRate: number,
    words: boolean,
    phonemes: boolean,
  ): Promise<void> {
    const b = this.behaviour;
    const received = performance.now();
    const speech = lagTimings(await fakeSpeech(g.transcript, sampleRate), b.timingsLagMs);
    // The first chunk leaves `firstChunkDelayMs` after the request, synthesis included.
    await sleep(Math.max(0, b.firstChunkDelayMs - (performance.now() - received)));
    const step = Math.round((b.chunkMs / 1000) * sampleRate);
    const base = { done: false, status_code: 206, context_id: g.contextId };
    for (let from = 0; from < speech.pcm.length; from += step) {
      if (g.cancelled || ws.readyState !== ws.OPEN) return;
      if (b.dropAfterChunks !== null && g.chunksSent >= b.dropAfterChunks) {
        ws.terminate();
        return;
      }
      const to = Math.min(speech.pcm.length, from + step);
      ws.send(
        JSON.stringify({
          ...base,
          type: 'chunk',
          data: pcmBase64(speech.pcm, from, to),
          step_time: 1,
        }),
      );
      g.chunksSent++;
      g.firstChunkAt ??= performance.now();
      const fromMs = (from / sampleRate) * 1000;
      const toMs = to >= speech.pcm.length ? Infinity : (to / sampleRate) * 1000;
      const inChunk = <T extends { startMs: number }>(xs: T[]) =>
        xs.filter((x) => x.startMs >= fromMs && x.startMs < toMs);
      const w = inChunk(speech.words);
      if (words && w.length > 0) {
        ws.send(
          JSON.stringify({
            ...base,
            type: 'timestamps',
            word_timestamps: {
              words: w.map((x) => x.text),
              start: w.map((x) => x.startMs / 1000),
              end: w.map((x) => x.endMs / 1000),
            },
          }),
        );
      }
      const p = inChunk(speech.phonemes);
      if (phonemes && b.phonemeTimestamps && p.length > 0) {
        ws.send(
          JSON.stringify({
            ...base,
            type: 'phoneme_timestamps',
            phoneme_timestamps: {
              phonemes: p.map((x) => x.ipa),
              start: p.map((x) => x.startMs / 1000),
              end: p.map((x) => x.endMs / 1000),
            },
          }),
        );
      }
      if (b.chunkIntervalMs > 0) await sleep(b.chunkIntervalMs);
    }
    if (g.cancelled || ws.readyState !== ws.OPEN) return;
    g.done = true;
    ws.send(
      JSON.stringify({ type: 'done', done: true, status_code: 206, context_id: g.contextId }),
    );
  }
}
