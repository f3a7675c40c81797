import pino from 'pino';
import { startDevServer, type DevServer } from '../../../src/devserver/index.js';
import { LiveKitMediaCore } from '../../../src/media/session/index.js';
import { startTestServer, type TestServer } from '../../server/testServer.js';
import { AvatarClient } from './avatarClient.js';

export interface MediaStack {
  livekit: DevServer;
  visage: TestServer;
  /** The LiveKit API key and secret both servers use. */
  apiKey: string;
  apiSecret: string;
  /** Creates a session and joins its room as a frontend would, both tracks subscribed. */
  session(avatarId: string, extra?: Record<string, unknown>): Promise<JoinedSession>;
  close(): Promise<void>;
}

export interface JoinedSession {
  session_id: string;
  livekit_url: string;
  participant_token: string;
  agent_identity: string;
  room_name: string;
  client: AvatarClient;
}

/**
 * The real thing for end-to-end tests: the embedded LiveKit server on the namespace address and
 * a Visage server whose sessions put real avatars into its rooms.
 */
export async function startMediaStack(
  address: string,
  options: { cap?: number; agentAbsenceMs?: number } = {},
): Promise<MediaStack> {
  const log = pino({ level: process.env.VISAGE_TEST_LOG_LEVEL ?? 'warn' });
  const apiKey = 'devkey';
  const apiSecret = `secret-${Math.random().toString(36).slice(2)}-for-tests`;
  const livekit = await startDevServer({
    port: 0,
    host: address,
    nodeIp: address,
    keys: { [apiKey]: apiSecret },
    logger: log,
  });
  const visage = await startTestServer({
    cap: options.cap ?? 10,
    config: { livekit: { url: livekit.url, apiKey, apiSecret } },
    start: {
      media: await LiveKitMediaCore.create({ log, agentAbsenceMs: options.agentAbsenceMs }),
    },
  });
  const clients: AvatarClient[] = [];
  return {
    livekit,
    visage,
    apiKey,
    apiSecret,
    async session(avatarId, extra = {}) {
      const res = await visage.call('POST', '/v1/sessions', {
        json: { avatar_id: avatarId, mode: 'video', ...extra },
      });
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
      const body = (await res.json()) as Omit<JoinedSession, 'client'>;
      const client = new AvatarClient();
      clients.push(client);
      await client.join(body.livekit_url, body.participant_token);
      await client.waitForTracks();
      return { ...body, client };
    },
    close: async () => {
      for (const c of clients) await c.leave().catch(() => undefined);
      await visage.close();
      await livekit.close();
    },
  };
}
