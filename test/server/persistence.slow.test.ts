// SPDX-License-Identifier: GPL-3.0-or-later
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { inject, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { copyTemplate } from './templateDatabase.js';
import { startTestServer } from './testServer.js';
import { multipartClip } from './wav.js';

const AVATAR = AVATAR_CATALOGUE[2]!.avatarId;

describe('persistence', () => {
  it('keeps keys, files, voices and sessions across a restart; live sessions end with shutdown', async () => {
    const dataDir = copyTemplate(inject('dbTemplate'));
    const first = await startTestServer({ dataDir });
    const up = await first.call('POST', '/v1/files', {
      body: multipartClip(new Uint8Array(readFileSync('test/fixtures/audio/speech.mp3'))),
    });
    const { file_id } = (await up.json()) as { file_id: string };
    const voice = (await (
      await first.call('POST', '/v1/voices', { json: { name: 'Kept', file_id } })
    ).json()) as {
      voice_id: string;
    };
    const session = (await (
      await first.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR, mode: 'video', voice_id: voice.voice_id },
      })
    ).json()) as { session_id: string };
    await first.close();

    const second = await startTestServer({ dataDir });
    try {
      // The first server's key still authenticates on the second.
      const call = (m: string, p: string, json?: unknown) =>
        second.call(m, p, { json, auth: first.secret });
      const voices = (await (await call('GET', '/v1/voices')).json()) as {
        data: { voice_id: string }[];
      };
      expect(voices.data.map((v) => v.voice_id)).toContain(voice.voice_id);
      const old = (await (
        await call('GET', `/v1/sessions/${session.session_id}`)
      ).json()) as Record<string, unknown>;
      expect(old).toMatchObject({ status: 'ended', end_reason: 'shutdown' });
      const again = await call('POST', '/v1/voices', { name: 'From kept file', file_id });
      expect(again.status).toBe(201);
      const s2 = await call('POST', '/v1/sessions', {
        avatar_id: AVATAR,
        mode: 'video',
        voice_id: voice.voice_id,
      });
      expect(s2.status).toBe(201);
      expect(s2.headers.get('x-service-concurrent-sessions')).toBe('1');
    } finally {
      await second.close();
    }
  });

  it('ends the sessions of a crashed process at the next start, so no slot leaks', async () => {
    const dataDir = copyTemplate(inject('dbTemplate'));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/server/crashingServer.ts', dataDir],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
    });
    const { secret, sessionId } = JSON.parse(line) as { secret: string; sessionId: string };
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    const server = await startTestServer({ dataDir, cap: 1 });
    try {
      const res = await server.call('GET', `/v1/sessions/${sessionId}`, { auth: secret });
      expect(await res.json()).toMatchObject({ status: 'ended', end_reason: 'shutdown' });
      const fresh = await server.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR, mode: 'video' },
        auth: secret,
      });
      expect(fresh.status).toBe(201);
    } finally {
      await server.close();
    }
  }, 60_000);
});
