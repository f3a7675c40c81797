// SPDX-License-Identifier: Apache-2.0
// The agent's own page: a user joins a room of the agent's LiveKit server, which dispatches the
// worker (agent.ts) into it; the page shows and plays the avatar, shows the conversation as
// LiveKit's components do (the agent's `lk.transcription` streams, word by word as the avatar
// says them), and sends what the user types to the agent (`lk.chat` text streams). This server
// holds the LiveKit key and secret and mints the user's token; the browser never sees them.
//
//   export $(npx visage dev --print-livekit-credentials)
//   npx tsx examples/agent-worker/frontend.ts        (then open http://localhost:3001)
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AccessToken } from 'livekit-server-sdk';
import { startPageServer, type PageServer } from '../shared/pageServer.js';

export interface AgentFrontendOptions {
  /** The agent's LiveKit server; default $LIVEKIT_URL, else ws://127.0.0.1:7880. */
  livekitUrl?: string;
  /** Default $LIVEKIT_API_KEY. */
  apiKey?: string;
  /** Default $LIVEKIT_API_SECRET. */
  apiSecret?: string;
  host?: string;
  port?: number;
}

const page = readFileSync(new URL('./page.html', import.meta.url));

export async function startAgentFrontend(options: AgentFrontendOptions = {}): Promise<PageServer> {
  const livekitUrl = options.livekitUrl ?? process.env.LIVEKIT_URL ?? 'ws://127.0.0.1:7880';
  const apiKey = options.apiKey ?? process.env.LIVEKIT_API_KEY;
  const apiSecret = options.apiSecret ?? process.env.LIVEKIT_API_SECRET;
  if (!apiKey || !apiSecret) {
    throw new Error(
      'Set LIVEKIT_API_KEY and LIVEKIT_API_SECRET: for `visage dev`, run\n' +
        '  export $(npx visage dev --print-livekit-credentials)',
    );
  }
  return startPageServer({
    page,
    host: options.host,
    port: options.port ?? 3001,
    routes: {
      // A new room per visit: joining it dispatches the agent, which brings its avatar.
      'POST /api/token': async () => {
        const room = `agent-room-${randomBytes(6).toString('hex')}`;
        const identity = `user-${randomBytes(4).toString('hex')}`;
        const token = new AccessToken(apiKey, apiSecret, { identity, ttl: '1h' });
        token.addGrant({
          room,
          roomJoin: true,
          canSubscribe: true,
          canPublish: true,
          canPublishData: true,
        });
        return { livekit_url: livekitUrl, token: await token.toJwt(), room, identity };
      },
    },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startAgentFrontend({
    host: process.env.HOST,
    port: process.env.PORT ? Number(process.env.PORT) : undefined,
  });
  console.log(`agent page on ${server.url}`);
  process.once('SIGINT', () => void server.close().then(() => process.exit(0)));
}
