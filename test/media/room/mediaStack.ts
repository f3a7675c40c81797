// SPDX-License-Identifier: GPL-3.0-or-later
import { testLogger } from '../../support/testLog.js';
import {
  startDevServer,
  type DevServer,
  type DevServerOptions,
} from '../../../src/devserver/index.js';
import type { MediaAssets, MediaCore } from '../../../src/media/mediaCore.js';
import type { FileStorage } from '../../../src/server/assets/fileStorage.js';
import { LiveKitMediaCore, type AvatarVideoCodec } from '../../../src/media/room/index.js';
import type { TtsEngines } from '../../../src/media/tts/index.js';
import { ProcessPoolMediaCore } from '../../../src/media/mediaProcesses/index.js';
import { startTestServer, type TestServer } from '../../server/testServer.js';
import { catalogueAtlasDir, loadCatalogueAtlases } from '../../support/catalogueAtlases.js';
import type { Rect } from '../../../src/media/render/index.js';
import { AvatarClient } from './avatarClient.js';
import { buildCli } from '../../cli/builtCli.js';

export interface MediaStack {
  livekit: DevServer;
  visage: TestServer;
  /** The media core the Visage server runs its avatars with (in process, or in media processes). */
  media: LiveKitMediaCore | ProcessPoolMediaCore;
  /** The LiveKit API key and secret both servers use. */
  apiKey: string;
  apiSecret: string;
  /** Every log line both servers wrote at warn or above (the media sessions' included). */
  logs: Record<string, unknown>[];
  /**
   * Creates a session (`POST /v1/sessions`, video mode) as a client should: a 503
   * media_unavailable is retried, twice at most. Answers the 201 body.
   */
  create(avatarId: string, extra?: Record<string, unknown>): Promise<CreatedSession>;
  /**
   * Creates a session and joins its room as a frontend would, both tracks subscribed. The
   * client measures the mouth in `mouthRegion` (default: the stock avatars' MOUTH_REGION).
   */
  session(
    avatarId: string,
    extra?: Record<string, unknown>,
    client?: { mouthRegion?: Rect },
  ): Promise<JoinedSession>;
  close(): Promise<void>;
}

export interface CreatedSession {
  session_id: string;
  livekit_url: string;
  participant_token: string;
  agent_identity: string;
  room_name: string;
  /** `client` mode sessions: where the browser fetches the avatar's atlas. */
  atlas_url?: string;
}

export interface JoinedSession extends CreatedSession {
  client: AvatarClient;
}

/**
 * The real thing for end-to-end tests: the embedded LiveKit server on the namespace address and
 * a Visage server whose sessions put real avatars into its rooms.
 */
export async function startMediaStack(
  address: string,
  options: {
    cap?: number;
    agentAbsenceMs?: number;
    tts?: TtsEngines;
    allowPrivateUrls?: boolean;
    /** Room timeouts of the embedded server (shortened to test them). */
    rooms?: Pick<DevServerOptions, 'unjoinedRoomTimeoutMs' | 'emptyRoomTimeoutMs' | 'dynacast'>;
    /** Wraps the real media core (to observe the sessions it starts). */
    wrapMedia?: (core: MediaCore) => MediaCore;
    /** Runs the media in this many media processes instead of in this process. */
    processes?: number;
    /** With processes: sessions a process runs before a fresh process replaces it. */
    maxSessionsPerProcess?: number;
    /** In this process: the avatars' video codec (default: the product's). */
    videoCodec?: AvatarVideoCodec;
  } = {},
): Promise<MediaStack> {
  const logs: Record<string, unknown>[] = [];
  const log = testLogger((line) => logs.push(line));
  const apiKey = 'devkey';
  const apiSecret = `secret-${Math.random().toString(36).slice(2)}-for-tests`;
  const livekit = await startDevServer({
    port: 0,
    host: address,
    nodeIp: address,
    keys: { [apiKey]: apiSecret },
    logger: log,
    ...options.rooms,
  });
  // Photo avatars' builds come from the Visage server's file storage, as in `visage dev`.
  const storage: { files?: FileStorage } = {};
  const assets: MediaAssets = {
    get: (id) =>
      storage.files ? storage.files.get(id) : Promise.reject(new Error('no file storage yet')),
  };
  // Media processes run the build (built once per run from the current sources, so never an
  // older one): through tsx each start first transpiled the whole media graph (2 to 4 CPU-s).
  if (options.processes) await buildCli();
  // The catalogue's atlases drawn once per run and loaded from there (the real atlas cache), in
  // this process or in each media process, instead of drawn at every start (3 to 8 CPU-s each;
  // the first media processes of a run draw and store them).
  if (!options.processes) await loadCatalogueAtlases();
  const cacheDir = catalogueAtlasDir(options.processes ? 'build' : 'sources');
  const media = options.processes
    ? await ProcessPoolMediaCore.create({
        fromBuild: true,
        log,
        processes: options.processes,
        agentAbsenceMs: options.agentAbsenceMs,
        restartDelayMs: 200,
        maxSessionsPerProcess: options.maxSessionsPerProcess,
        assets,
        cacheDir,
      })
    : await LiveKitMediaCore.create({
        log,
        agentAbsenceMs: options.agentAbsenceMs,
        tts: options.tts,
        assets,
        videoCodec: options.videoCodec,
        cacheDir,
      });
  const visage = await startTestServer({
    cap: options.cap ?? 10,
    config: {
      livekit: { url: livekit.url, apiKey, apiSecret },
      allowPrivateUrls: options.allowPrivateUrls ?? false,
    },
    start: {
      media: options.wrapMedia ? options.wrapMedia(media) : media,
      tts: options.tts,
    },
  });
  storage.files = visage.files;
  const clients: AvatarClient[] = [];
  const create = async (avatarId: string, extra: Record<string, unknown> = {}) => {
    // A 503 media_unavailable says "try again", and clients do (the plugin retries it): on a
    // loaded machine rtc-node was seen to leave an avatar's first publication unnegotiated
    // (its offer carried no track), so that start failed after its bound. Twice more at most.
    let res: Response | undefined;
    for (let attempt = 1; attempt <= 3; attempt++) {
      res = await visage.call('POST', '/v1/sessions', {
        json: { avatar_id: avatarId, mode: 'video', ...extra },
      });
      if (res.status !== 503 || attempt === 3) break;
      const body = await res.text();
      if (!body.includes('"media_unavailable"')) {
        throw new Error(`create answered 503: ${body}`);
      }
      console.log(`create answered 503 media_unavailable (attempt ${attempt}), retrying: ${body}`);
    }
    if (res!.status !== 201) {
      throw new Error(`create answered ${res!.status}: ${await res!.text()}`);
    }
    return (await res!.json()) as CreatedSession;
  };
  return {
    livekit,
    visage,
    media,
    apiKey,
    apiSecret,
    logs,
    create,
    async session(avatarId, extra = {}, clientOptions = {}) {
      const body = await create(avatarId, extra);
      const client = new AvatarClient(clientOptions);
      clients.push(client);
      await client.join(body.livekit_url, body.participant_token);
      await client.waitForTracks();
      return { ...body, client };
    },
    close: async () => {
      for (const c of clients) await c.leave().catch(() => undefined);
      await visage.close(); // closes the media core (and stops its processes) too
      await livekit.close();
    },
  };
}
