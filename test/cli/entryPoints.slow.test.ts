// SPDX-License-Identifier: GPL-3.0-or-later
// Every feature through the entry points users run: `npx visage dev` (bin/visage.js and the
// build, its own data directory and embedded LiveKit) and `visage serve` against a LiveKit server,
// driven over HTTP and watched by a WebRTC subscriber, as the README starts them. A node that the
// tests assemble themselves could hide a wiring fault (a photo avatar once answered 503 under
// `visage dev` while every test that built its own runtime passed).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { AvatarClient, rms } from '../media/room/avatarClient.js';
import { copiedFromTemplate, copyTemplate, emptyDataDir } from '../server/templateDatabase.js';
import { multipartClip } from '../server/wav.js';
import { describeWebRtc } from '../support/network.js';
import { AccessToken } from 'livekit-server-sdk';
import { OFFLINE_GREETING } from '../../examples/agent-worker/echoLlm.js';
import { until } from '../plugin/agentHarness.js';
import { startAgentWorker } from '../plugin/agentWorkerProcess.js';
import { Frontend } from '../plugin/frontend.js';
import { ASTRONAUT_PATH, astronaut, multipartImage } from '../support/portraits.js';
import { buildCli, startCli, type CliProcess } from './cliProcess.js';

const STOCK_AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
const clip = () => new Uint8Array(readFileSync('test/fixtures/audio/speech.mp3'));

/** The API of a node started by the CLI, with the key it printed or was given. */
class Api {
  constructor(
    readonly url: string,
    readonly secret: string,
  ) {}

  async call(method: string, path: string, body?: { json?: unknown; form?: FormData }) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.secret}` };
    if (body?.json !== undefined) headers['content-type'] = 'application/json';
    return fetch(`${this.url}${path}`, {
      method,
      headers,
      body: body?.form ?? (body?.json === undefined ? undefined : JSON.stringify(body.json)),
    });
  }

  /** Calls, expects `status`, and answers the JSON body. */
  async expect<T>(status: number, method: string, path: string, body?: Parameters<Api['call']>[2]) {
    const res = await this.call(method, path, body);
    const text = await res.text();
    expect(res.status, `${method} ${path}: ${text}`).toBe(status);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

interface CreatedSession {
  session_id: string;
  avatar_id: string;
  voice_id: string;
  livekit_url: string;
  participant_token: string;
}

/** The assets a user makes first: an uploaded clip, a voice made from it, a photo avatar. */
async function makeAssets(api: Api) {
  const file = await api.expect<{ file_id: string }>(201, 'POST', '/v1/files', {
    form: multipartClip(clip(), 'speech.mp3', 'audio/mpeg'),
  });
  const voice = await api.expect<{ voice_id: string; source: string }>(201, 'POST', '/v1/voices', {
    json: { name: 'From a clip', file_id: file.file_id },
  });
  expect(voice.source).toBe('clone');
  const avatar = await api.expect<{ avatar_id: string; source: string }>(
    201,
    'POST',
    '/v1/avatars',
    { form: multipartImage(astronaut(), { name: 'Eileen' }) },
  );
  expect(avatar.source).toBe('photo');
  return { fileId: file.file_id, voiceId: voice.voice_id, photoAvatarId: avatar.avatar_id };
}

/**
 * One session from create to delete, watched by a subscriber: video frames that change, the
 * speech audible and its transcript final on lk.chat, then (when given) an uploaded file played.
 */
async function speakThrough(
  api: Api,
  create: { avatar_id: string; voice_id?: string },
  fileId?: string,
): Promise<void> {
  const session = await api.expect<CreatedSession>(201, 'POST', '/v1/sessions', {
    json: { ...create, mode: 'video' },
  });
  expect(session.avatar_id).toBe(create.avatar_id);
  if (create.voice_id) expect(session.voice_id).toBe(create.voice_id);
  const client = new AvatarClient();
  try {
    await client.join(session.livekit_url, session.participant_token);
    await client.waitFor(() => client.video.length >= 25, 30_000, 'a second of avatar video');
    const from = client.now();
    const text = 'Hello from the entry point test. Can you hear me?';
    const spoken = await api.expect<{ utterance_id: string }>(
      202,
      'POST',
      `/v1/sessions/${session.session_id}/speak`,
      { json: { text } },
    );
    await client.waitFor(
      () => client.finals().some((m) => m.utterance_id === spoken.utterance_id),
      60_000,
      'the spoken text, final on lk.chat',
    );
    const final = client.finals().find((m) => m.utterance_id === spoken.utterance_id)!;
    expect(final.text).toBe(text);
    expect(rms(client.audioBetween(from, client.now())), 'the speech, audible').toBeGreaterThan(
      300,
    );
    const frames = client.video.filter((v) => v.atMs >= from);
    expect(new Set(frames.map((v) => v.checksum)).size, 'frames that move').toBeGreaterThan(5);
    if (fileId) {
      const playFrom = client.now();
      const played = await api.expect<{ utterance_id: string }>(
        202,
        'POST',
        `/v1/sessions/${session.session_id}/audio?text=${encodeURIComponent('an uploaded clip')}`,
        { json: { file_id: fileId } },
      );
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === played.utterance_id),
        60_000,
        'the uploaded clip, final on lk.chat',
      );
      expect(rms(client.audioBetween(playFrom, client.now())), 'the clip, audible').toBeGreaterThan(
        300,
      );
    }
  } finally {
    await client.leave();
  }
  await api.expect(204, 'DELETE', `/v1/sessions/${session.session_id}`);
}

const apiIn = (out: string) => /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
const secretIn = (out: string) => /sk_[0-9A-Za-z]{40}/.exec(out)![0];

async function stop(cli: CliProcess) {
  cli.child.kill('SIGTERM');
  expect((await cli.done).code).toBe(0);
}

describeWebRtc('the entry points users run (the build, real WebRTC)', () => {
  beforeAll(() => buildCli(), 180_000);

  // One `npx visage dev` on a new data directory for the first two tests (each started its own:
  // a cold start draws the avatars and warms the TTS), stopped by the third.
  describe('`npx visage dev` on a new data directory', () => {
    let dev: CliProcess;
    let api: Api;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'visage-dev-'));
      dev = startCli(['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir], {
        built: true,
        shared: true,
      });
      const out = await dev.waitFor(/Press Ctrl-C/, 180_000);
      api = new Api(apiIn(out), secretIn(out));
    }, 200_000);
    afterAll(() => {
      dev?.child.kill('SIGKILL');
    });

    it('a stock avatar, a photo avatar, a cloned voice, an uploaded file', async () => {
      const assets = await makeAssets(api);
      await speakThrough(api, { avatar_id: STOCK_AVATAR, voice_id: assets.voiceId }, assets.fileId);
      await speakThrough(api, { avatar_id: assets.photoAvatarId }, assets.fileId);
    }, 400_000);

    it("the plugin's avatarImage (examples/agent-worker with VISAGE_AVATAR_IMAGE)", async () => {
      // What `export $(npx visage dev --print-livekit-credentials)` gives the worker (the port is
      // the one this run chose).
      const printed = await startCli(['dev', '--print-livekit-credentials', '--data-dir', dir], {
        built: true,
      }).done;
      const credentials = Object.fromEntries(
        printed.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('=', 2) as [string, string]),
      );
      const livekitUrl = /LiveKit:\s+(ws:\/\/\S+)/.exec(dev.output())![1]!;
      const worker = startAgentWorker(
        {
          LIVEKIT_URL: livekitUrl,
          LIVEKIT_API_KEY: credentials.LIVEKIT_API_KEY!,
          LIVEKIT_API_SECRET: credentials.LIVEKIT_API_SECRET!,
          VISAGE_API_KEY: api.secret,
          VISAGE_API_URL: api.url,
          VISAGE_AVATAR_IMAGE: ASTRONAUT_PATH,
        },
        ['--offline'],
      );
      const user = new Frontend();
      try {
        await worker.registered();
        const { LIVEKIT_API_KEY: key, LIVEKIT_API_SECRET: secret } = credentials;
        const token = new AccessToken(key!, secret!, { identity: 'visitor' });
        token.addGrant({
          room: 'photo-room',
          roomJoin: true,
          canSubscribe: true,
          canPublishData: true,
        });
        // Joining creates the room, which dispatches the worker's agent into it.
        await user.join(livekitUrl, await token.toJwt());
        await user.waitForTracks(120_000).catch((err: unknown) => {
          throw new Error(`${String(err)}\n--- worker output ---\n${worker.output().slice(-4000)}`);
        });
        // The plugin speaks a reply sentence by sentence: one final transcript each.
        const spoken = () =>
          user
            .finals()
            .map((m) => m.text)
            .join(' ');
        await until(() => spoken().includes(OFFLINE_GREETING), 60_000, 'the greeting').catch(
          (err: unknown) => {
            throw new Error(`${String(err)}: heard "${spoken()}"\n${worker.output().slice(-3000)}`);
          },
        );
        const live = await api.expect<{ data: { avatar_id: string; room_name: string }[] }>(
          200,
          'GET',
          '/v1/sessions?status=active',
        );
        const session = live.data.find((s) => s.room_name === 'photo-room')!;
        const avatar = await api.expect<{ source: string }>(
          200,
          'GET',
          `/v1/avatars/${session.avatar_id}`,
        );
        expect(avatar.source).toBe('photo');
      } finally {
        await user.leave().catch(() => undefined);
        await worker.stop();
      }
    }, 400_000);

    it('stops cleanly on SIGTERM', () => stop(dev), 60_000);
  });

  it('`visage dev --media-processes 0` (the media in the API process): a photo avatar and a cloned voice', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const dev = startCli(
      ['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir, '--media-processes', '0'],
      { built: true },
    );
    const out = await dev.waitFor(/Press Ctrl-C/, 180_000);
    const api = new Api(apiIn(out), secretIn(out));
    const assets = await makeAssets(api);
    await speakThrough(api, { avatar_id: assets.photoAvatarId, voice_id: assets.voiceId });
    await stop(dev);
  }, 300_000);

  // `visage serve` against a LiveKit server: the standalone embedded one (`visage livekit`).
  describe('visage serve', () => {
    let livekit: CliProcess | undefined;
    let livekitUrl: string;
    const keys = { key: 'serve-test-key', secret: 'serve-test-secret-0123456789abcdef0123' };
    beforeAll(async () => {
      livekit = startCli(
        ['livekit', '--port', '0', '--host', '127.0.0.1', '--keys', `${keys.key}:${keys.secret}`],
        { built: true },
      );
      const out = await livekit.waitFor(/server at ws:\/\/\S+/, 60_000);
      livekitUrl = /server at (ws:\/\/\S+)/.exec(out)![1]!;
    }, 120_000);
    afterAll(async () => {
      livekit?.child.kill('SIGTERM');
      await livekit?.done;
    });

    it('`visage serve` with LIVEKIT_URL: a stock avatar, a photo avatar, a cloned voice, an uploaded file', async () => {
      // A new data directory: serve copies its database from the installation's template, and
      // a key is then made through the running node (cli.slow makes one before a start).
      const dir = emptyDataDir();
      const serve = startCli(['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dir], {
        built: true,
        env: {
          LIVEKIT_URL: livekitUrl,
          LIVEKIT_API_KEY: keys.key,
          LIVEKIT_API_SECRET: keys.secret,
        },
      });
      const out = await serve.waitFor(/serving (http:\/\/\S+)/, 180_000);
      const url = /serving (http:\/\/\S+)/.exec(out)![1]!;
      expect(copiedFromTemplate(dir, inject('dbTemplate')), 'copied from the template').toBe(true);
      const keysOut = await startCli(['keys', 'create', '--name', 'serve', '--data-dir', dir], {
        built: true,
      }).done;
      expect(keysOut.code, keysOut.stderr).toBe(0);
      const created = secretIn(keysOut.stdout);
      const api = new Api(url, created);
      const assets = await makeAssets(api);
      await speakThrough(api, { avatar_id: STOCK_AVATAR, voice_id: assets.voiceId }, assets.fileId);
      await speakThrough(api, { avatar_id: assets.photoAvatarId });
      await stop(serve);
    }, 400_000);
  });
});
