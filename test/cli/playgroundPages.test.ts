// SPDX-License-Identifier: GPL-3.0-or-later
// The playground's HTTP side, on a real node (real database, real HTTP): the page and its bundled
// script, and the tokens it mints, which admit a browser to one fresh room of the embedded LiveKit
// and carry no secret. Only a node given the pages (`visage dev`) serves them; the browser half
// is test/cli/playground.slow.test.ts.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { TokenVerifier } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playgroundPages } from '../../src/cli/playground/playgroundPages.js';
import { PLAYGROUND_TOKEN_TTL_SECONDS } from '../../src/cli/playground/playgroundToken.js';
import { LIVEKIT_FOR_TESTS, startTestServer, type TestServer } from '../server/testServer.js';

// The package exports no package.json: read it beside its entry (dist/…).
const LIVEKIT_CLIENT_VERSION = (
  JSON.parse(
    readFileSync(
      join(dirname(createRequire(import.meta.url).resolve('livekit-client')), '../package.json'),
      'utf8',
    ),
  ) as { version: string }
).version;

/** An HTTP exchange with the headers as given (fetch would set Host and Origin itself). */
function exchange(
  url: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: o.method ?? 'GET', headers: o.headers, agent: false },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('the playground pages on a dev node', () => {
  let server: TestServer;
  let host: string;
  const tokenRequest = (body: string, headers: Record<string, string> = {}) =>
    exchange(`${server.url}/playground/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  beforeAll(async () => {
    server = await startTestServer({
      start: { pages: [playgroundPages({ livekit: Promise.resolve(LIVEKIT_FOR_TESTS) })] },
    });
    host = new URL(server.url).host;
  }, 120_000);
  afterAll(() => server?.close());

  it('serves the page, with a policy that loads script from this server only', async () => {
    const page = await exchange(`${server.url}/playground`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<script type="module" src="/playground/playground.js">');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('serves its script with livekit-client bundled in: no import leaves the server', async () => {
    const script = await exchange(`${server.url}/playground/playground.js`);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    // Booleans, not the text: a failure would print half a megabyte of minified code.
    const has = (s: string | RegExp) =>
      typeof s === 'string' ? script.text.includes(s) : s.test(script.text);
    expect(has('lk.chat') && has('lk.agent.state')).toBe(true);
    // The SDK itself (its version string), not an import of it.
    expect(has(`"${LIVEKIT_CLIENT_VERSION}"`)).toBe(true);
    expect(has(/\bfrom\s*["'][^"'.]/)).toBe(false);
    expect(has(/\bimport\s*\(?\s*["']https?:/)).toBe(false);
  }, 60_000);

  it('mints a short-lived token for a fresh room each time, and no secret', async () => {
    const answers = await Promise.all([tokenRequest('{}'), tokenRequest('')]);
    const tokens = answers.map(
      (a) =>
        JSON.parse(a.text) as {
          livekit_url: string;
          token: string;
          room: string;
          identity: string;
        },
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.text).not.toContain(LIVEKIT_FOR_TESTS.apiSecret);
      const t = tokens[i]!;
      expect(t.livekit_url).toBe(LIVEKIT_FOR_TESTS.url);
      const claims = await new TokenVerifier(
        LIVEKIT_FOR_TESTS.apiKey,
        LIVEKIT_FOR_TESTS.apiSecret,
      ).verify(t.token);
      expect(claims.sub).toBe(t.identity);
      expect(claims.video).toMatchObject({
        room: t.room,
        roomJoin: true,
        canPublish: true,
        canSubscribe: true,
        canPublishData: true,
      });
      expect(claims.video?.roomAdmin).toBeFalsy();
      // Its own clock reads for nbf and exp: a second apart when they straddle one.
      expect(Math.abs(claims.exp! - claims.nbf! - PLAYGROUND_TOKEN_TTL_SECONDS)).toBeLessThan(2);
      expect(claims.roomConfig?.agents ?? []).toEqual([]);
    }
    expect(tokens[0]!.room).not.toBe(tokens[1]!.room);
    expect(tokens[0]!.identity).not.toBe(tokens[1]!.identity);
  });

  it('dispatches a named agent through the token when the page names one', async () => {
    const answer = await tokenRequest(JSON.stringify({ agent: 'my-agent' }), {
      origin: `http://${host}`,
    });
    expect(answer.status).toBe(200);
    const { token } = JSON.parse(answer.text) as { token: string };
    const claims = await new TokenVerifier(
      LIVEKIT_FOR_TESTS.apiKey,
      LIVEKIT_FOR_TESTS.apiSecret,
    ).verify(token);
    expect(claims.roomConfig?.agents?.map((a) => a.agentName)).toEqual(['my-agent']);
  });

  it('asks the agent for a face drawn in the browser through its dispatch metadata', async () => {
    const claimsOf = async (body: unknown) => {
      const answer = await tokenRequest(JSON.stringify(body));
      expect(answer.status).toBe(200);
      const { token } = JSON.parse(answer.text) as { token: string };
      return new TokenVerifier(LIVEKIT_FOR_TESTS.apiKey, LIVEKIT_FOR_TESTS.apiSecret).verify(token);
    };
    const client = await claimsOf({ face: 'client' });
    expect(client.roomConfig?.agents?.map((a) => [a.agentName, a.metadata])).toEqual([
      ['', '{"face":"client"}'],
    ]);
    const named = await claimsOf({ agent: 'my-agent', face: 'client' });
    expect(named.roomConfig?.agents?.map((a) => [a.agentName, a.metadata])).toEqual([
      ['my-agent', '{"face":"client"}'],
    ]);
    // Video (the default) changes nothing: the room's own dispatch of the unnamed workers.
    expect((await claimsOf({ face: 'video' })).roomConfig).toBeUndefined();
    expect((await tokenRequest('{"face":"webgl"}')).status).toBe(400);
  });

  it('refuses a rebinding host, another origin, a form post, a bad or large body', async () => {
    const rebound = await exchange(`${server.url}/playground`, {
      headers: { host: 'attacker.example:8080' },
    });
    expect(rebound.status).toBe(403);
    const reboundToken = await tokenRequest('{}', { host: 'attacker.example' });
    expect(reboundToken.status).toBe(403);
    expect(reboundToken.text).not.toContain('token":');
    expect((await tokenRequest('{}', { origin: 'http://attacker.example' })).status).toBe(403);
    const form = await exchange(`${server.url}/playground/token`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(form.status).toBe(415);
    expect((await tokenRequest('{"agent":"a b"}')).status).toBe(400);
    expect((await tokenRequest('{"agent":"x","admin":true}')).status).toBe(400);
    expect((await tokenRequest('not json')).status).toBe(400);
    expect((await tokenRequest(JSON.stringify({ agent: 'a'.repeat(2000) }))).status).toBe(413);
    // localhost and IPv6 literals are this machine too.
    for (const name of ['localhost', '[::1]']) {
      const local = await exchange(`${server.url}/playground`, {
        headers: { host: `${name}:${server.port}` },
      });
      expect(local.status).toBe(200);
    }
  });
});

describe('a node without the pages (`visage serve`)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  }, 120_000);
  afterAll(() => server?.close());

  it('has no playground and no token endpoint', async () => {
    expect((await exchange(`${server.url}/playground`)).status).toBe(404);
    const token = await exchange(`${server.url}/playground/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(token.status).toBe(404);
  });
});
