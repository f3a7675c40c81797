// SPDX-License-Identifier: GPL-3.0-or-later
import type { WebSocket } from 'ws';
import { fakeSpeech, lagTimings, pcmBase64, type FakeSpeech } from './fakeSpeech.js';
import { FakeProvider, multipartParts, sleep, type FakeRequestLog } from './fakeProvider.js';

export interface ElevenLabsGeneration {
  voiceId: string;
  query: URLSearchParams;
  text: string;
  chunksSent: number;
  /** The client closed the socket before the final message (an interrupt). */
  cancelled: boolean;
  done: boolean;
  firstChunkAt: number | null;
}

/** Start time of every character of `text`, from the speech's word timings. */
function charTimes(text: string, speech: FakeSpeech): number[] {
  const times = new Array<number>(text.length).fill(-1);
  for (const w of speech.words) {
    const len = Math.max(1, w.charEnd - w.charStart);
    for (let i = w.charStart; i < w.charEnd && i < text.length; i++) {
      times[i] = w.startMs + ((i - w.charStart) / len) * (w.endMs - w.startMs);
    }
  }
  let last = 0;
  for (let i = 0; i < times.length; i++) {
    if (times[i]! < 0) times[i] = last;
    last = times[i]!;
  }
  return times;
}

/**
 * A protocol-faithful fake of ElevenLabs (elevenlabs.io docs: POST /v1/voices/add, GET /v1/user,
 * WebSocket /v1/text-to-speech/{voice_id}/stream-input with PCM output and character alignment
 * relative to each chunk). Audio is real espeak-ng speech with its real timings.
 */
export class ElevenLabsFake extends FakeProvider {
  readonly clones: { name: string; files: number; clipBytes: number }[] = [];
  readonly generations: ElevenLabsGeneration[] = [];
  /**
   * The next this many generations are refused inside the open socket as ElevenLabs refuses one
   * over the account's concurrency limit: an error message, then a close 1008.
   */
  busyGenerations = 0;
  /** The error code those refusals carry (`system_busy` and `rate_limit_exceeded` come alike). */
  busyError = 'too_many_concurrent_requests';
  /** How many such refusals were sent. */
  busySent = 0;

  constructor(apiKey = 'elevenlabs-test-key') {
    super(apiKey, (req) => req.headers['xi-api-key'] as string | undefined);
  }

  protected async route(req: FakeRequestLog): Promise<{ status: number; json: unknown }> {
    const path = new URL(req.path, 'http://fake').pathname;
    if (req.method === 'GET' && path === '/v1/user') {
      return { status: 200, json: { subscription: { tier: 'test' } } };
    }
    if (req.method === 'POST' && path === '/v1/voices/add') {
      const parts = await multipartParts(req);
      const files = parts.filter((p) => p.name === 'files' && p.filename !== null);
      const name = parts.find((p) => p.name === 'name')?.value.toString();
      if (files.length === 0 || !name) {
        return { status: 422, json: { detail: { message: 'name and files are required' } } };
      }
      this.clones.push({ name, files: files.length, clipBytes: files[0]!.value.length });
      return {
        status: 200,
        json: { voice_id: `eleven-voice-${this.clones.length}`, requires_verification: false },
      };
    }
    return { status: 404, json: { detail: { message: 'not found' } } };
  }

  protected onSocket(ws: WebSocket, url: URL): void {
    const match = /^\/v1\/text-to-speech\/([^/]+)\/stream-input$/.exec(url.pathname);
    const voiceId = match?.[1] ?? '';
    const known = this.clones.some((_, i) => voiceId === `eleven-voice-${i + 1}`);
    if (!known || !/^pcm_\d+$/.test(url.searchParams.get('output_format') ?? '')) {
      ws.send(
        JSON.stringify({ message: 'invalid voice or output format', error: 'invalid_request' }),
      );
      ws.close(1008, 'invalid request');
      return;
    }
    const sampleRate = Number(url.searchParams.get('output_format')!.slice(4));
    let text = '';
    let begun = false;
    let g: ElevenLabsGeneration | undefined;
    let refused = false;
    ws.on('message', (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as { text?: string; flush?: boolean };
      if (typeof msg.text !== 'string') return;
      if (!begun) {
        // The first message opens the stream and must be a single space.
        begun = msg.text === ' ';
        if (!begun) ws.close(1008, 'the first message must be a space');
        return;
      }
      if (msg.text !== '') text += msg.text;
      if ((msg.flush === true || msg.text === '') && !g && !refused && text.trim() !== '') {
        if (this.busyGenerations > 0) {
          refused = true;
          this.busyGenerations--;
          this.busySent++;
          ws.send(
            JSON.stringify({
              message: 'Too many concurrent requests for this account; try again shortly.',
              error: this.busyError,
              code: 1008,
            }),
          );
          ws.close(1008, this.busyError);
          return;
        }
        g = {
          voiceId,
          query: url.searchParams,
          text: text.trimEnd(),
          chunksSent: 0,
          cancelled: false,
          done: false,
          firstChunkAt: null,
        };
        this.generations.push(g);
        void this.generate(ws, g, sampleRate);
      }
    });
    ws.on('close', () => {
      if (g && !g.done) g.cancelled = true;
    });
  }

  private async generate(ws: WebSocket, g: ElevenLabsGeneration, sampleRate: number) {
    const b = this.behaviour;
    const received = performance.now();
    const speech = lagTimings(await fakeSpeech(g.text, sampleRate), b.timingsLagMs);
    const spoken = `${g.text} `;
    const times = charTimes(spoken, speech);
    // The first chunk leaves `firstChunkDelayMs` after the request, synthesis included.
    await sleep(Math.max(0, b.firstChunkDelayMs - (performance.now() - received)));
    const step = Math.round((b.chunkMs / 1000) * sampleRate);
    let nextChar = 0;
    for (let from = 0; from < speech.pcm.length; from += step) {
      if (ws.readyState !== ws.OPEN) return;
      if (b.dropAfterChunks !== null && g.chunksSent >= b.dropAfterChunks) {
        ws.terminate();
        return;
      }
      const to = Math.min(speech.pcm.length, from + step);
      const fromMs = (from / sampleRate) * 1000;
      const toMs = to >= speech.pcm.length ? Infinity : (to / sampleRate) * 1000;
      const chars: string[] = [];
      const starts: number[] = [];
      while (nextChar < spoken.length && times[nextChar]! < toMs) {
        chars.push(spoken[nextChar]!);
        starts.push(Math.max(0, Math.round(times[nextChar]! - fromMs)));
        nextChar++;
      }
      const durations = starts.map((s, i) =>
        Math.max(0, (starts[i + 1] ?? Math.round(((to - from) / sampleRate) * 1000)) - s),
      );
      const alignment =
        // The service's own spellings (`charsDurationsMs` has the plural s).
        chars.length > 0 ? { chars, charStartTimesMs: starts, charsDurationsMs: durations } : null;
      ws.send(
        JSON.stringify({
          audio: pcmBase64(speech.pcm, from, to),
          isFinal: false,
          alignment,
          normalizedAlignment: alignment,
        }),
      );
      g.chunksSent++;
      g.firstChunkAt ??= performance.now();
      if (b.chunkIntervalMs > 0) await sleep(b.chunkIntervalMs);
    }
    if (ws.readyState !== ws.OPEN) return;
    g.done = true;
    ws.send(JSON.stringify({ isFinal: true }));
    ws.close(1000);
  }
}
