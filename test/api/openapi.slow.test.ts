// SPDX-License-Identifier: GPL-3.0-or-later
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIO_PAYLOAD_CANONICAL_TYPES, ENDPOINTS } from '@visage-avatar/client/api';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { AccessToken } from 'livekit-server-sdk';
import {
  LIVEKIT_FOR_TESTS,
  startTestServer,
  unknownSessionId,
  type TestServer,
} from '../server/testServer.js';
import { multipartClip, sineWav } from '../server/wav.js';
import { astronaut, multipartImage } from '../support/portraits.js';
import { OpenApiConformance, type OpenApiDocument } from './openApiConformance.js';

const AVATAR = AVATAR_CATALOGUE[0]!;
const speech = () => new Uint8Array(readFileSync('test/fixtures/audio/speech.mp3'));

let server: TestServer;
let doc: OpenApiDocument;

beforeAll(async () => {
  server = await startTestServer({ cap: 5 });
  doc = (await (await server.call('GET', '/v1/openapi.json', { auth: null })).json()) as never;
});

afterAll(async () => {
  await server?.close();
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for a maintained validator, and dereferences (no self-reference)', async () => {
    await SwaggerParser.validate(structuredClone(doc) as never);
    const deref = (await SwaggerParser.dereference(structuredClone(doc) as never)) as never as {
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(deref.components.schemas.ErrorEnvelope!.properties).toHaveProperty('error');
  });

  it('describes every endpoint of the endpoint table, and the one list of audio types', () => {
    for (const [name, ep] of Object.entries(ENDPOINTS)) {
      expect(doc.paths[ep.path]?.[ep.method.toLowerCase()]?.operationId).toBe(name);
    }
    const audio = doc.paths['/v1/sessions/{id}/audio']!.post as unknown as {
      requestBody: { content: Record<string, unknown> };
    };
    expect(Object.keys(audio.requestBody.content)).toEqual([
      ...AUDIO_PAYLOAD_CANONICAL_TYPES,
      'application/json',
    ]);
  });

  it('generates TypeScript types (openapi-typescript) that the typed client agrees with', async () => {
    const types = astToString(await openapiTS(structuredClone(doc) as never));
    const dir = join('.tmp', `openapi-types-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'schema.ts'), types);
    writeFileSync(join(dir, 'check.ts'), CLIENT_TYPE_CHECK);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../tsconfig.json',
        compilerOptions: { noEmit: true, declaration: false, sourceMap: false },
        include: ['check.ts'],
      }),
    );
    const tsc = spawnSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', join(dir, 'tsconfig.json')],
      { encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 180_000);
});

describe('real answers of every endpoint', () => {
  it('match the document, successes and errors alike', async () => {
    const oa = new OpenApiConformance(doc);
    const call = async (
      method: string,
      template: string,
      path: string,
      init?: Parameters<TestServer['call']>[2],
    ) => oa.check(method, template, await server.call(method, path, init));

    await oa.check('GET', '/healthz', await server.call('GET', '/healthz', { auth: null }));
    await oa.check('GET', '/readyz', await server.call('GET', '/readyz', { auth: null }));
    await oa.check(
      'GET',
      '/v1/openapi.json',
      await server.call('GET', '/v1/openapi.json', { auth: null }),
    );
    await call('GET', '/v1/avatars', '/v1/avatars');
    await call('GET', '/v1/avatars', '/v1/avatars', { auth: null });
    const photo = (await call('POST', '/v1/avatars', '/v1/avatars', {
      body: multipartImage(astronaut(), { name: 'Eileen' }),
    })) as { avatar_id: string };
    await call('POST', '/v1/avatars', '/v1/avatars', {
      body: multipartImage(new TextEncoder().encode('not a picture'), { name: 'x' }),
    });
    await call('POST', '/v1/avatars', '/v1/avatars', {
      json: { name: 'x', image_url: 'http://127.0.0.1/face.png' },
    });
    await call('GET', '/v1/avatars', '/v1/avatars?limit=2');
    await call('GET', '/v1/avatars/{id}', `/v1/avatars/${photo.avatar_id}`);
    await call('GET', '/v1/avatars/{id}', `/v1/avatars/${AVATAR.avatarId}`);
    await call('GET', '/v1/avatars/{id}/preview', `/v1/avatars/${photo.avatar_id}/preview`);
    await call('GET', '/v1/avatars/{id}/preview', `/v1/avatars/${AVATAR.avatarId}/preview`);
    await call('GET', '/v1/avatars/{id}/preview', '/v1/avatars/avt_unknown/preview');

    const file = (await call('POST', '/v1/files', '/v1/files', {
      body: multipartClip(speech(), 'speech.mp3', 'audio/mpeg'),
    })) as { file_id: string };
    await call('POST', '/v1/files', '/v1/files', { body: multipartClip(sineWav(0.2)) });
    await call('GET', '/v1/files', '/v1/files?limit=5');
    await call('GET', '/v1/files', '/v1/files?after=nonsense');
    await call('GET', '/v1/files/{id}', `/v1/files/${file.file_id}`);
    await call('GET', '/v1/files/{id}', '/v1/files/file_unknown');
    const voice = (await call('POST', '/v1/voices', '/v1/voices', {
      json: { name: 'Narrator', file_id: file.file_id },
    })) as { voice_id: string };
    await call('POST', '/v1/voices', '/v1/voices', { json: { name: 'x' } });
    await call('GET', '/v1/voices', '/v1/voices?limit=100');
    await call('GET', '/v1/voices', '/v1/voices?limit=0');
    await call('GET', '/v1/voices/{id}', `/v1/voices/${voice.voice_id}`);
    await call('GET', '/v1/voices/{id}', '/v1/voices/vc_unknown');

    const created = (await call('POST', '/v1/sessions', '/v1/sessions', {
      json: { avatar_id: AVATAR.avatarId, mode: 'video' },
    })) as { session_id: string };
    await call('POST', '/v1/sessions', '/v1/sessions', {
      json: { avatar_id: AVATAR.avatarId, mode: 'audio' },
    });
    // On a LiveKit the caller brings: the answer carries no participant token.
    const callerToken = new AccessToken('their-key', 'their-secret-0123456789abcdef0123', {
      identity: 'avatar-openapi',
      ttl: 600,
    });
    callerToken.addGrant({
      room: 'their-room',
      roomJoin: true,
      canPublish: true,
      canPublishData: true,
    });
    const onTheirs = (await call('POST', '/v1/sessions', '/v1/sessions', {
      json: {
        avatar_id: AVATAR.avatarId,
        mode: 'video',
        livekit: { url: LIVEKIT_FOR_TESTS.url, token: await callerToken.toJwt() },
      },
    })) as Record<string, unknown>;
    expect(onTheirs).not.toHaveProperty('participant_token');
    await call('DELETE', '/v1/sessions/{id}', `/v1/sessions/${String(onTheirs.session_id)}`);
    // A client session's signed atlas URL, fetched with no key; a wrong signature.
    const client = (await call('POST', '/v1/sessions', '/v1/sessions', {
      json: { avatar_id: AVATAR.avatarId, mode: 'client' },
    })) as { session_id: string; atlas_url: string };
    const atlas = new URL(client.atlas_url);
    const atlasPath = `${atlas.pathname}${atlas.search}`;
    await call('GET', '/v1/avatars/{id}/atlas', atlasPath, { auth: null });
    await call('GET', '/v1/avatars/{id}/atlas', atlasPath.replace(/sig=[\w-]/, 'sig=_'), {
      auth: null,
    });
    await call('DELETE', '/v1/sessions/{id}', `/v1/sessions/${client.session_id}`);
    const id = created.session_id;
    const one = (sub = '') => `/v1/sessions/${id}${sub}`;
    await call('GET', '/v1/sessions', '/v1/sessions?status=active');
    await call('GET', '/v1/sessions/{id}', one());
    await call('GET', '/v1/sessions/{id}', `/v1/sessions/${unknownSessionId()}`);
    await call('POST', '/v1/sessions/{id}/speak', one('/speak'), { json: { text: 'Hello.' } });
    await call('POST', '/v1/sessions/{id}/speak', one('/speak'), { json: {} });
    await call('POST', '/v1/sessions/{id}/audio', one('/audio?text=hi'), {
      body: sineWav(0.5) as Uint8Array<ArrayBuffer>,
      headers: { 'content-type': 'audio/wav' },
    });
    await call('POST', '/v1/sessions/{id}/audio', one('/audio'), {
      json: { file_id: file.file_id },
    });
    await call('POST', '/v1/sessions/{id}/audio', one('/audio'), {
      body: 'text',
      headers: { 'content-type': 'text/plain' },
    });
    await call('POST', '/v1/sessions/{id}/interrupt', one('/interrupt'));
    await call('POST', '/v1/sessions/{id}/waiting_state', one('/waiting_state'), {
      json: { waiting: true },
    });
    await call('POST', '/v1/sessions/{id}/speak', one('/speak'), { json: { text: 'Parked.' } });
    await call('POST', '/v1/sessions/{id}/waiting_state', one('/waiting_state'), {
      json: { waiting: false },
    });
    await call('POST', '/v1/sessions/{id}/participant_token', one('/participant_token'));
    await call('DELETE', '/v1/sessions/{id}', one());
    await call('DELETE', '/v1/sessions/{id}', one());
    await call('POST', '/v1/sessions/{id}/interrupt', one('/interrupt'));
    await call('POST', '/v1/sessions/{id}/participant_token', one('/participant_token'));
    await call('GET', '/v1/sessions/{id}', one());
    // Deleting what a session no longer uses; the voice keeps its own copy of the file.
    await call('DELETE', '/v1/voices/{id}', `/v1/voices/${voice.voice_id}`);
    await call('DELETE', '/v1/voices/{id}', `/v1/voices/${voice.voice_id}`);
    await call('DELETE', '/v1/files/{id}', `/v1/files/${file.file_id}`);
    await call('DELETE', '/v1/files/{id}', `/v1/files/${file.file_id}`);
    await call('DELETE', '/v1/avatars/{id}', `/v1/avatars/${photo.avatar_id}`);
    await call('DELETE', '/v1/avatars/{id}', `/v1/avatars/${photo.avatar_id}`);
    await call('DELETE', '/v1/avatars/{id}', `/v1/avatars/${AVATAR.avatarId}`);
    await call('PUT' as 'GET', '/v1/sessions', '/v1/sessions').catch((err: Error) => {
      expect(err.message).toMatch(/no operation PUT/);
    });

    // Every operation was answered at least once with its declared success status.
    for (const [name, ep] of Object.entries(ENDPOINTS)) {
      expect([...(oa.checked.get(name) ?? [])], name).toContain(ep.status);
    }
    // Every endpoint once, a photo avatar build among them: 30 s was overrun under two CPU hogs.
  }, 120_000);
});

/** Compiled against the generated types: the client's types and the document's must agree. */
const CLIENT_TYPE_CHECK = `
import type { components, paths } from './schema.js';
import type { VisageClient } from '@visage-avatar/client';
import type {
  CreateAvatarRequest,
  CreateSessionRequest,
  CreateVoiceRequest,
} from '@visage-avatar/client/api';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(): T | undefined => undefined;
type Answer<F> = F extends (...args: never[]) => Promise<infer R> ? Omit<R, 'concurrency'> : never;
type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type S = components['schemas'];

same<Same<Answer<VisageClient['files']['upload']>, S['File']>>();
same<Same<Answer<VisageClient['voices']['create']>, S['Voice']>>();
same<Same<Answer<VisageClient['voices']['list']>, Json<'/v1/voices', 'get', 200>>>();
same<Same<Answer<VisageClient['voices']['get']>, Json<'/v1/voices/{id}', 'get', 200>>>();
same<Same<Answer<VisageClient['files']['list']>, Json<'/v1/files', 'get', 200>>>();
same<Same<Answer<VisageClient['files']['get']>, Json<'/v1/files/{id}', 'get', 200>>>();
same<Same<Answer<VisageClient['avatars']['list']>, Json<'/v1/avatars', 'get', 200>>>();
same<Same<Answer<VisageClient['avatars']['create']>, S['Avatar']>>();
same<Same<Answer<VisageClient['avatars']['get']>, Json<'/v1/avatars/{id}', 'get', 200>>>();
same<Same<CreateAvatarRequest, Body<'/v1/avatars', 'post'>>>();
same<Same<Answer<VisageClient['sessions']['create']>, S['CreatedSession']>>();
same<Same<Answer<VisageClient['sessions']['list']>, Json<'/v1/sessions', 'get', 200>>>();
same<Same<Answer<VisageClient['sessions']['get']>, Json<'/v1/sessions/{id}', 'get', 200>>>();
same<Same<Answer<VisageClient['sessions']['speak']>, Json<'/v1/sessions/{id}/speak', 'post', 202>>>();
same<Same<Answer<VisageClient['sessions']['audio']>, Json<'/v1/sessions/{id}/audio', 'post', 202>>>();
same<Same<Answer<VisageClient['sessions']['interrupt']>, Json<'/v1/sessions/{id}/interrupt', 'post', 200>>>();
same<Same<Answer<VisageClient['sessions']['setWaiting']>, Json<'/v1/sessions/{id}/waiting_state', 'post', 200>>>();
same<Same<Answer<VisageClient['sessions']['participantToken']>, Json<'/v1/sessions/{id}/participant_token', 'post', 200>>>();
same<Same<Answer<VisageClient['health']>, Json<'/healthz', 'get', 200>>>();
same<Same<Answer<VisageClient['readiness']>, Json<'/readyz', 'get', 200>>>();
same<Same<CreateSessionRequest, Body<'/v1/sessions', 'post'>>>();
same<Same<CreateVoiceRequest, Body<'/v1/voices', 'post'>>>();
same<Same<Parameters<VisageClient['sessions']['create']>[0], S['CreateSessionRequest']>>();
`;
