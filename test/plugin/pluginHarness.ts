// SPDX-License-Identifier: GPL-3.0-or-later
// A real Visage server in-process with the simulated avatar media, and AvatarSessions started
// in stand-in rooms (no WebRTC needed).
import { tokenize } from '@livekit/agents';
import type { Room } from '@livekit/rtc-node';
import { AvatarSession, type AvatarSessionOptions } from '@visage-avatar/livekit-plugin';
import { startTestServer, type TestServer } from '../server/testServer.js';
import { agent, agentSession, type SessionUnderTest } from './agentHarness.js';
import { SimulatedAvatarMedia, type SimulatedAvatar, type StandInRoom } from './simulatedAvatar.js';

export const MILO = 'avt_Milo00000000000000000001';

export interface PluginHarness {
  server: TestServer;
  media: SimulatedAvatarMedia;
  /** Starts an AgentSession with an avatar (before session.start, as documented). */
  start(options: StartOptions): Promise<Started>;
  close(): Promise<void>;
}

export interface StartOptions {
  responses?: Array<{ input: string; content: string }>;
  withVad?: boolean;
  avatar?: Partial<AvatarSessionOptions>;
}

export interface Started extends SessionUnderTest {
  avatar: AvatarSession;
  room: StandInRoom;
  sessionId: string;
  /** The avatar the server runs for this session. */
  sim: SimulatedAvatar;
}

let rooms = 0;

export async function startPluginHarness(options: { msPerChar?: number } = {}) {
  const media = new SimulatedAvatarMedia({ msPerChar: options.msPerChar ?? 15 });
  const server = await startTestServer({ start: { media }, cap: 20 });
  const started: Started[] = [];
  const harness: PluginHarness = {
    server,
    media,
    async start(o) {
      const room = media.room(`plugin-room-${++rooms}`);
      const sut = agentSession(o.responses ?? [], { withVad: o.withVad });
      const avatar = new AvatarSession({
        avatarId: MILO,
        apiKey: server.secret,
        apiUrl: server.url,
        // One /speak per sentence even for short ones, so tests see every boundary.
        sentenceTokenizer: new tokenize.basic.SentenceTokenizer({ minSentenceLength: 1 }),
        parkAfterSeconds: null,
        ...o.avatar,
      });
      try {
        const sessionId = await avatar.start(sut.session, room as unknown as Room);
        await sut.session.start({ agent: agent() });
        const sim = media.sessions.get(sessionId)!;
        const s = { ...sut, avatar, room, sessionId, sim };
        started.push(s);
        return s;
      } catch (err) {
        await sut.close();
        await avatar.aclose();
        throw err;
      }
    },
    async close() {
      // Each AgentSession takes about half a second to close (agents-js): all at once.
      await Promise.all(
        started.map(async (s) => {
          await s.close();
          await s.avatar.aclose();
        }),
      );
      await server.close();
    },
  };
  return harness;
}

/** The session as the server's API reports it. */
export async function apiSession(server: TestServer, id: string) {
  const res = await server.call('GET', `/v1/sessions/${id}`);
  return (await res.json()) as { status: string; end_reason: string | null };
}
