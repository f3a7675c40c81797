// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoomServiceClient } from 'livekit-server-sdk';
import { defaultNodeIp } from '../../src/devserver/nodeAddress.js';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { databaseTemplateDir } from '../../src/cli/databaseTemplateDir.js';
import { ensureDatabaseTemplate } from '../../src/server/store/databaseTemplate.js';
import { Store } from '../../src/server/store/store.js';
import { copiedFromTemplate, copyTemplate, emptyDataDir } from '../server/templateDatabase.js';
import { startTestServer } from '../server/testServer.js';
import { buildCli, startCli as startSource, type CliStart } from './cliProcess.js';

// The build (bin/visage.js, built once per run by buildCli), as users run it: a CLI run through
// tsx from source takes about three times as long to start (2.2 s against 7.9 s for a refused
// `visage dev` on a busy machine), and this file runs the CLI about forty times.
const startCli = (args: string[], o: CliStart = {}) => startSource(args, { ...o, built: true });
const runCli = (args: string[], env?: CliStart['env']) => startCli(args, { env }).done;

beforeAll(() => buildCli(), 180_000);

const secretIn = (out: string) => /sk_[0-9A-Za-z]{40}/.exec(out)?.[0];
const keyIdIn = (out: string) => /key_[0-9A-Za-z]{24}/.exec(out)?.[0];

describe('visage keys', () => {
  it('creates, lists, re-caps and revokes keys on a data directory, never listing secrets', async () => {
    // A new data directory, as deployment.md's first command finds it: its database is copied
    // from the installation's template (npm ci made it), not created (7 s against 2.5 s here).
    const dir = emptyDataDir();
    const created = await runCli([
      'keys',
      'create',
      '--name',
      'backend',
      '--cap',
      '2',
      '--data-dir',
      dir,
    ]);
    expect(created.code).toBe(0);
    expect(
      copiedFromTemplate(dir, inject('dbTemplate')),
      'the database copied from the template',
    ).toBe(true);
    const secret = secretIn(created.stdout)!;
    const id = keyIdIn(created.stdout)!;
    expect(secret).toBeTruthy();
    const list = await runCli(['keys', 'list', '--data-dir', dir]);
    expect(list.stdout).toContain(id);
    expect(list.stdout).toContain('cap=2');
    expect(list.stdout).not.toContain(secret);
    expect(
      (await runCli(['keys', 'update', id, '--cap', '5', '--data-dir', dir])).stdout,
    ).toContain('cap 5');
    expect((await runCli(['keys', 'revoke', id, '--data-dir', dir])).code).toBe(0);
    expect((await runCli(['keys', 'list', '--data-dir', dir])).stdout).toMatch(/revoked/);
  }, 180_000); // about ten CLI runs, each opening the database: 4 s apiece at load 13

  it('works against a running server, whose changes apply at once', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const server = await startTestServer({ dataDir: dir });
    try {
      const created = await runCli([
        'keys',
        'create',
        '--name',
        'live',
        '--cap',
        '1',
        '--data-dir',
        dir,
      ]);
      expect(created.code, created.stderr).toBe(0);
      const secret = secretIn(created.stdout)!;
      const id = keyIdIn(created.stdout)!;
      const ok = await server.call('GET', '/v1/avatars', { auth: secret });
      expect(ok.status).toBe(200);
      const s1 = await server.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
        auth: secret,
      });
      expect(s1.status).toBe(201);
      await runCli(['keys', 'update', id, '--cap', '2', '--data-dir', dir]);
      const s2 = await server.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
        auth: secret,
      });
      expect(s2.headers.get('x-service-max-concurrent-sessions')).toBe('2');
      expect(s2.status).toBe(201);
      expect((await runCli(['keys', 'revoke', id, '--data-dir', dir])).code).toBe(0);
      expect((await server.call('GET', '/v1/avatars', { auth: secret })).status).toBe(401);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('command-line errors', () => {
  it('prints help with exit 0 and refuses bad input with a clear message and exit 2', async () => {
    for (const args of [['--help'], ['dev', '--help'], ['serve', '--help'], ['keys', '--help']]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/Usage: visage/);
    }
    const cases: [string[], RegExp][] = [
      [['bogus'], /unknown command: bogus/],
      [['dev', '--port', 'abc'], /--port must be an integer/],
      [['dev', '--colour'], /Unknown option '--colour'/],
      [['keys', 'create'], /needs --name/],
      [['keys', 'frobnicate'], /unknown keys command/],
      [['keys', 'update', 'key_x'], /needs --cap/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    // The media's settings (speech engine, video codec) are refused before anything starts.
    for (const [env, message] of [
      [{ VISAGE_VIDEO_CODEC: 'av1' }, /VISAGE_VIDEO_CODEC must be one of h264, vp8 \(got 'av1'\)/],
      [
        { VISAGE_TTS_ENGINE: 'polly' },
        /VISAGE_TTS_ENGINE must be one of espeak, elevenlabs, cartesia \(got 'polly'\)/,
      ],
      [
        { VISAGE_MEDIA_PROCESSES: 'two' },
        /VISAGE_MEDIA_PROCESSES must be a whole number ≥ 0 \(got 'two'\)/,
      ],
      [
        { VISAGE_TTS_ENGINE: 'elevenlabs', ELEVENLABS_API_KEY: '' },
        /TTS engine "elevenlabs" is not available: ELEVENLABS_API_KEY is not set/,
      ],
      [
        { VISAGE_TTS_ENGINE: 'cartesia', CARTESIA_API_KEY: ' ' },
        /TTS engine "cartesia" is not available: CARTESIA_API_KEY is not set/,
      ],
    ] as const) {
      const r = await runCli(['dev', '--port', '0'], env);
      expect(r.code, JSON.stringify(env)).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).not.toMatch(/starting/);
    }
    const pg = await runCli(['dev', '--port', '0'], { DATABASE_URL: 'mysql://x@localhost/db' });
    expect(pg.code).toBe(2);
    expect(pg.stderr).toMatch(/DATABASE_URL must be a postgres:\/\//);
    const serve = await runCli(['serve'], {
      LIVEKIT_URL: '',
      LIVEKIT_API_KEY: '',
      LIVEKIT_API_SECRET: '',
    });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/needs LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET/);
  }, 240_000);

  it('still takes the old names of renamed settings, with a one-line warning naming the new', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'visage-renamed-'));
    const old = { VISAGE_WORKERS: '1', VISAGE_TTS_THREAD: 'worker' };
    const dev = await runCli(
      ['dev', '--workers', '1', '--data-dir', dir, '--print-livekit-credentials'],
      old,
    );
    expect(dev.code).toBe(0);
    expect(dev.stdout).toMatch(/^LIVEKIT_URL=ws:\/\//m);
    expect(dev.stderr.trim().split('\n')).toEqual([
      'visage: warning: VISAGE_WORKERS is deprecated: use VISAGE_MEDIA_PROCESSES',
      'visage: warning: VISAGE_TTS_THREAD=worker is deprecated: use VISAGE_TTS_THREAD=thread',
      'visage: warning: --workers is deprecated: use --media-processes',
    ]);
    // The new names alone warn about nothing.
    const now = await runCli(
      ['dev', '--media-processes', '1', '--data-dir', dir, '--print-livekit-credentials'],
      { VISAGE_MEDIA_PROCESSES: '1', VISAGE_TTS_THREAD: 'thread' },
    );
    expect(now.code).toBe(0);
    expect(now.stderr).not.toMatch(/deprecated/);
    // serve warns too, before it checks anything else.
    const serve = await runCli(['serve', '--workers', '1'], { LIVEKIT_URL: '' });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/warning: --workers is deprecated: use --media-processes\n/);
  }, 120_000);
});

describe('visage dev', () => {
  it('starts on embedded defaults, prints its key once, and shuts down cleanly on SIGTERM', async () => {
    // A first start: the database is copied from the installation's template (npm ci makes it).
    await ensureDatabaseTemplate(databaseTemplateDir()!);
    const dir = mkdtempSync(join(tmpdir(), 'visage-cold-'));
    const args = ['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir];
    const first = startCli(args);
    const banner = await first.waitFor(/Press Ctrl-C/, 120_000);
    // The banner comes once the API, the database and LiveKit are ready; the media processes go
    // on starting behind it (the avatars, the TTS), and say when they are ready.
    expect(banner).toMatch(/media\s+(starting \d+ media process(es)?…|\d+ process(es)? ready in)/);
    const out = await first.waitFor(/media\s+\d+ process(es)? ready in \d+\.\d s/, 120_000);
    // Progress: one line per step, each with its time.
    expect(out).toMatch(/livekit\s+listening at ws:\/\/\S+ in \d+\.\d s/);
    expect(out).toMatch(/database\s+created from the template in \d+\.\d s/);
    expect(out).toMatch(/tts\s+ready in \d+\.\d s/);
    expect(out).toMatch(/avatars\s+3 drawn and cached in \d+\.\d s/);
    expect(out).toMatch(/Visage \S+ \(dev\) ready in \d+\.\d s\./);
    const api = /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
    expect(out).toMatch(/LiveKit:\s+ws:\/\/\S+/);
    const secret = secretIn(out)!;
    expect(secret).toBeTruthy();
    const created = await fetch(`${api}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' }),
    });
    expect(created.status).toBe(201);
    const { session_id } = (await created.json()) as { session_id: string };
    first.child.kill('SIGTERM');
    expect((await first.done).code).toBe(0);

    // Second start: the key is not printed again, the data is still there, the session ended.
    const second = startCli(args, { ownGroup: true });
    await second.waitFor(/Press Ctrl-C/, 120_000);
    const out2 = await second.waitFor(/media\s+\d+ process(es)? ready in/, 120_000);
    expect(secretIn(out2)).toBeUndefined();
    // A warm start opens the database it made: nothing is created or copied again.
    expect(out2).toMatch(/database\s+opened in \d+\.\d s/);
    expect(out2).not.toMatch(/database\s+creat/);
    // The avatars' atlases come from the data directory's cache: nothing is drawn again.
    expect(out2).toMatch(/avatars\s+3 from cache in \d+\.\d s/);
    const api2 = /API:\s+(http:\/\/\S+)/.exec(out2)![1]!;
    const s = await fetch(`${api2}/v1/sessions/${session_id}`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(await s.json()).toMatchObject({ status: 'ended', end_reason: 'shutdown' });
    const live = await fetch(`${api2}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' }),
    });
    const { session_id: liveId } = (await live.json()) as { session_id: string };
    // Ctrl-C in a terminal: SIGINT to the whole process group (the LiveKit child included).
    process.kill(-second.child.pid!, 'SIGINT');
    expect((await second.done).code).toBe(0);
    // The session was ended by the shutdown, not by LiveKit going away first.
    const store = await Store.openEmbedded(dir);
    const key = await store.findKeyBySecret(secret);
    const ended = await store.getSession(key!.id, liveId);
    await store.close();
    expect(ended).toMatchObject({ status: 'ended', endReason: 'shutdown' });
  }, 300_000);

  it('gives the embedded LiveKit server its own secret per data directory, on loopback only', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const printed = await runCli(['dev', '--print-livekit-credentials', '--data-dir', dir]);
    expect(printed.code).toBe(0);
    const env = Object.fromEntries(
      printed.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=', 2) as [string, string]),
    );
    expect(env.LIVEKIT_URL).toBe('ws://127.0.0.1:7880');
    expect(env.LIVEKIT_API_KEY).toMatch(/^API[0-9A-Za-z]{12}$/);
    expect(env.LIVEKIT_API_SECRET).toMatch(/^[0-9A-Za-z]{43}$/);
    const file = join(dir, 'livekit-credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // The log level a user has: info lines are written, but after the banner.
    const dev = startCli(['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir], {
      env: { VISAGE_LOG_LEVEL: 'info' },
    });
    // A generous deadline: a cold start builds the avatars and warms the TTS engine.
    const out = await dev.waitFor(/Press Ctrl-C/, 120_000);
    const livekit = /LiveKit:\s+ws:\/\/(\S+)/.exec(out)![1]!;
    expect(livekit).toMatch(/^127\.0\.0\.1:\d+$/);
    // A quiet start: progress lines, then the banner, and not one JSON log line before its end.
    const lines = out.slice(0, out.indexOf('Press Ctrl-C')).split('\n');
    expect(lines.filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    const api = /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
    expect(out).toContain(`Playground:  ${api}/playground`);
    expect(out).toMatch(/Dev key \(shown once, store it now\): sk_/);
    // The lines to paste into an agent's shell: this data directory's pair, the port it runs on.
    const exported = lines.filter((l) => /^\s*export /.test(l)).map((l) => l.trim());
    expect(exported).toEqual([
      `export LIVEKIT_URL=ws://${livekit}`,
      `export LIVEKIT_API_KEY=${env.LIVEKIT_API_KEY}`,
      `export LIVEKIT_API_SECRET=${env.LIVEKIT_API_SECRET}`,
      `export VISAGE_API_URL=${api}`,
      `export VISAGE_API_KEY=${secretIn(out)}`,
    ]);
    // The media processes start behind the banner, quietly too: their progress line, and not
    // one info line in JSON until they are up.
    const started = await dev.waitFor(/processes? ready in/, 120_000);
    const behind = started.slice(
      started.indexOf('Press Ctrl-C'),
      started.search(/processes? ready in/),
    );
    expect(behind.split('\n').filter((l) => l.trimStart().startsWith('{'))).toEqual([]);
    // The log lines come after that (a request's line, at info).
    expect((await fetch(`${api}/healthz`)).status).toBe(200);
    const logged = await dev.waitFor(/"path":"\/healthz"/);
    expect(logged.indexOf('"path":"/healthz"')).toBeGreaterThan(logged.indexOf('Press Ctrl-C'));
    // The credentials made before the start are the ones it answers to; devkey:secret is refused.
    const rooms = (key: string, secret: string) =>
      new RoomServiceClient(`http://${livekit}`, key, secret).listRooms();
    await expect(rooms(env.LIVEKIT_API_KEY!, env.LIVEKIT_API_SECRET!)).resolves.toEqual([]);
    await expect(rooms('devkey', 'secret')).rejects.toThrow();
    // Signalling is bound to loopback: this machine's other address does not answer.
    const other = defaultNodeIp();
    if (!other.startsWith('127.')) {
      const port = livekit.split(':')[1]!;
      await expect(fetch(`http://${other}:${port}/`)).rejects.toThrow();
    }
    dev.child.kill('SIGTERM');
    expect((await dev.done).code).toBe(0);

    // Reused, not regenerated, on later starts.
    const again = await runCli(['dev', '--print-livekit-credentials', '--data-dir', dir]);
    expect(again.stdout).toBe(printed.stdout);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      apiKey: env.LIVEKIT_API_KEY,
      apiSecret: env.LIVEKIT_API_SECRET,
    });
  }, 180_000);

  it('runs LiveKit in a child process that does not outlive a killed parent', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const dev = startCli(['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir]);
    const out = await dev.waitFor(/Press Ctrl-C/);
    const livekit = /LiveKit:\s+ws:\/\/(\S+)/.exec(out)![1]!;
    expect((await fetch(`http://${livekit}/`)).status).toBe(200);
    dev.child.kill('SIGKILL');
    await dev.done;
    const until = Date.now() + 10_000;
    let alive = true;
    while (alive && Date.now() < until) {
      alive = await fetch(`http://${livekit}/`).then(
        () => true,
        () => false,
      );
      if (alive) await sleep(100);
    }
    expect(alive).toBe(false);
  }, 180_000);

  it('registers VISAGE_DEV_KEY instead of creating a key', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const key = `sk_${'D'.repeat(40)}`;
    // With every log line shown (--verbose): none of them holds the key either.
    const dev = startCli(
      ['dev', '--verbose', '--port', '0', '--livekit-port', '0', '--data-dir', dir],
      { env: { VISAGE_DEV_KEY: key, VISAGE_LOG_LEVEL: 'info' } },
    );
    const out = await dev.waitFor(/Press Ctrl-C/);
    expect(out).toContain('$VISAGE_DEV_KEY (registered now)');
    const api = /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
    const res = await fetch(`${api}/v1/avatars`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    // The database is warmed up for a first burst of creates (warmUp.ts) while the media
    // processes start: every round, since no create came.
    const warmed = await dev.waitFor(/"msg":"database warmed up"/, 120_000);
    expect(warmed).toMatch(/"rounds":300,"ms":\d+,"msg":"database warmed up"/);
    expect(warmed).not.toContain(key);
    dev.child.kill('SIGTERM');
    expect((await dev.done).code).toBe(0);
  }, 180_000);
});
