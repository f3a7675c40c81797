// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './testServer.js';

/** Small deterministic PRNG so a failure can be replayed from its seed. */
function mulberry32(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.VISAGE_FUZZ_SEED ?? 20261121);
const rand = mulberry32(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

function randomValue(depth = 0): unknown {
  const kinds = depth > 2 ? 5 : 7;
  switch (Math.floor(rand() * kinds)) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return pick([0, -1, 1e308, -0.5, 42, Number.MAX_SAFE_INTEGER + 2]);
    case 3:
      return pick([
        '',
        'video',
        'livekit',
        'avt_x',
        '\u0000',
        '😀'.repeat(50),
        'a'.repeat(5000),
        'ses_' + 'A'.repeat(24),
        'vc_a\u0000',
        'file_' + 'A'.repeat(23) + '\u0000',
        'avt_Ada00000000000000000000\u0001',
        'Ada\u0000Lovelace',
        'line\u001b[31m',
        '\u007f\u0085\u009f',
      ]);
    case 4:
      return pick(['http://127.0.0.1/x', 'javascript:alert(1)', 'https://[::1]/', '']);
    case 5:
      return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth + 1));
    default: {
      const fields = [
        'avatar_id',
        'mode',
        'voice_id',
        'transport',
        'text',
        'waiting',
        'name',
        'file_id',
        'url',
        'room_name',
        'publish_on_behalf',
        '__proto__',
        'constructor',
        'x',
      ];
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 5); i > 0; i--) o[pick(fields)] = randomValue(depth + 1);
      return o;
    }
  }
}

function randomBody(): string {
  const r = rand();
  if (r < 0.6) return JSON.stringify(randomValue());
  if (r < 0.8) {
    const s = JSON.stringify(randomValue());
    return s.slice(0, Math.floor(rand() * s.length)); // truncated JSON
  }
  return Buffer.from(
    Array.from({ length: Math.floor(rand() * 64) }, () => Math.floor(rand() * 256)),
  ).toString('latin1');
}

let server: TestServer;
let sessionId: string;

beforeAll(async () => {
  server = await startTestServer({
    limits: { requestBurst: 10_000, requestsPerSecond: 10_000 },
    cap: 50,
  });
  const res = await server.call('POST', '/v1/sessions', {
    json: { avatar_id: 'avt_Ada000000000000000000001', mode: 'video' },
  });
  sessionId = ((await res.json()) as { session_id: string }).session_id;
});
afterAll(() => server?.close());

/** Path segments and query values with NUL and other control characters (percent-encoded). */
const HOSTILE_SEGMENTS = [
  '%00',
  'ses_%00',
  `ses_${'A'.repeat(23)}%00`,
  '%01%1f%7f',
  'ses_%C2%85',
  '..%2F..%2F',
  '%ff%fe',
  'vc_a%00',
  `ses_${'A'.repeat(24)}`,
];

function hostilePath(): [string, string] {
  const segment = pick(HOSTILE_SEGMENTS);
  return pick<[string, string]>([
    ['GET', `/v1/sessions/${segment}`],
    ['DELETE', `/v1/sessions/${segment}`],
    ['POST', `/v1/sessions/${segment}/speak`],
    ['POST', `/v1/sessions/${segment}/audio`],
    ['POST', `/v1/sessions/${segment}/interrupt`],
    ['POST', `/v1/sessions/${segment}/waiting_state`],
    ['POST', `/v1/sessions/${segment}/participant_token`],
    ['GET', `/v1/sessions?after=${segment}`],
    ['GET', `/v1/sessions?status=${segment}`],
    ['GET', `/v1/voices?after=${segment}`],
    ['GET', `/v1/sessions?limit=${segment}`],
    ['POST', `/v1/sessions/${sessionId}/audio?text=${segment}`],
  ]);
}

describe(`fuzzing the JSON endpoints (seed ${SEED})`, () => {
  it('answers every malformed or random body with a well-formed envelope, never a 500', async () => {
    const targets = [
      ['POST', '/v1/sessions'],
      ['POST', '/v1/voices'],
      ['POST', `/v1/sessions/${sessionId}/speak`],
      ['POST', `/v1/sessions/${sessionId}/waiting_state`],
      ['POST', `/v1/sessions/${sessionId}/interrupt`],
      ['POST', `/v1/sessions/${sessionId}/audio`],
      ['POST', '/v1/files'],
      ['GET', `/v1/sessions?${pick(['limit=-1', 'after=%00', 'status=', 'limit=1e9'])}`],
    ] as const;
    const created: string[] = [];
    for (let i = 0; i < 400; i++) {
      const [method, path] = rand() < 0.25 ? hostilePath() : pick(targets);
      const contentType = pick([
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'multipart/form-data; boundary=x',
        'audio/wav',
        '',
      ]);
      const res = await server.call(method, path, {
        body: method === 'GET' ? undefined : randomBody(),
        headers: contentType ? { 'content-type': contentType } : {},
      });
      expect(res.status, `${method} ${path} #${i}`).toBeLessThan(500);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      const text = await res.text();
      if (res.status >= 400) {
        const body = JSON.parse(text) as { error: Record<string, unknown> };
        expect(Object.keys(body)).toEqual(['error']);
        expect(body.error).toMatchObject({
          type: expect.any(String),
          code: expect.any(String),
          message: expect.any(String),
          request_id: res.headers.get('x-request-id'),
        });
      } else if (path === '/v1/sessions' && res.status === 201) {
        created.push((JSON.parse(text) as { session_id: string }).session_id);
      }
    }
    for (const id of created) await server.call('DELETE', `/v1/sessions/${id}`);
    expect((await server.call('GET', '/healthz')).status).toBe(200);
  }, 120_000);
});
