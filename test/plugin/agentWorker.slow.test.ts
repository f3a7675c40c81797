// SPDX-License-Identifier: GPL-3.0-or-later
// The agent-worker example as it runs for real: an unmodified agents worker process (`dev`)
// registers with the embedded LiveKit server, is dispatched when a user joins a room, starts the
// Visage avatar in that room and answers through an OpenAI-compatible endpoint (a scripted one
// here). The user types (lk.chat text stream) and hears the avatar; leaving ends the session.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevServer } from '../../src/devserver/index.js';
import { startMediaStack, type MediaStack } from '../media/room/mediaStack.js';
import type { TestServer } from '../server/testServer.js';
import { describeWebRtc } from '../support/network.js';
import { until } from './agentHarness.js';
import { startAgentWorker, type AgentWorkerProcess } from './agentWorkerProcess.js';
import { Frontend } from './frontend.js';

const GREETING = 'Hello! I am your Visage avatar.';
const ANSWER = 'Two plus two is four.';

/** A scripted OpenAI-compatible endpoint: streams a fixed answer per conversation state. */
function startFakeOpenAI(
  host: string,
): Promise<{ server: Server; url: string; prompts: string[] }> {
  const prompts: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { messages } = JSON.parse(body) as {
        messages: Array<{ role: string; content: unknown }>;
      };
      const last = Array.isArray(messages) ? messages[messages.length - 1] : undefined;
      const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
      prompts.push(text);
      const reply = /two plus two/i.test(text) ? ANSWER : GREETING;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of reply.match(/.{1,6}/g)!) {
        const chunk = {
          id: 'chatcmpl-test',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'test',
          choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
        };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, host, () =>
      resolve({
        server,
        url: `http://${host}:${(server.address() as AddressInfo).port}/v1`,
        prompts,
      }),
    ),
  );
}

describeWebRtc('examples/agent-worker with a real agents worker', (address) => {
  let stack: MediaStack;
  let livekit: DevServer;
  let visage: TestServer;
  let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
  let worker: AgentWorkerProcess;

  beforeAll(async () => {
    stack = await startMediaStack(address);
    ({ livekit, visage } = stack);
    openai = await startFakeOpenAI(address);
    worker = startAgentWorker({
      LIVEKIT_URL: livekit.url,
      LIVEKIT_API_KEY: 'devkey',
      LIVEKIT_API_SECRET: stack.apiSecret,
      VISAGE_API_KEY: visage.secret,
      VISAGE_API_URL: visage.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'test',
    });
  }, 90_000);

  afterAll(async () => {
    await worker?.stop();
    openai?.server.close();
    await stack?.close();
  });

  it('greets the user through the avatar, answers typed chat, and ends the session when the user leaves', async () => {
    const user = new Frontend();
    const token = new AccessToken('devkey', stack.apiSecret, { identity: 'visitor' });
    token.addGrant({
      room: 'worker-room',
      roomJoin: true,
      canSubscribe: true,
      canPublishData: true,
    });
    try {
      // Joining creates the room, which dispatches the (unnamed) worker's agent into it.
      await worker.registered();
      await user.join(livekit.url, await token.toJwt());
      await user.waitForTracks(60_000).catch((err: unknown) => {
        throw new Error(`${String(err)}\n--- worker output ---\n${worker.output().slice(-4000)}`);
      });
      const avatar = [...user.room.remoteParticipants.values()].find((p) =>
        p.identity.startsWith('visage-avatar-'),
      )!;
      const agentIdentity = avatar.attributes['lk.publish_on_behalf'];
      expect(user.room.remoteParticipants.get(agentIdentity!)).toBeDefined();

      await until(() => user.finals().some((m) => m.text === GREETING), 30_000, 'the greeting');
      await user.room.localParticipant!.sendText('What is two plus two?', { topic: 'lk.chat' });
      await until(() => user.finals().some((m) => m.text === ANSWER), 30_000, 'the answer');
      expect(openai.prompts.some((p) => /two plus two/i.test(p))).toBe(true);

      const sessions = await visage.call('GET', '/v1/sessions?status=active');
      const live = (await sessions.json()) as {
        data: Array<{ session_id: string; room_name: string }>;
      };
      const mine = live.data.filter((s) => s.room_name === 'worker-room');
      expect(mine).toHaveLength(1);
      await user.leave();
      // The user left: the AgentSession closes and the plugin DELETEs the session (not agent_left).
      await expect
        .poll(
          async () => {
            const res = await visage.call('GET', `/v1/sessions/${mine[0]!.session_id}`);
            const session = (await res.json()) as { status: string; end_reason: string | null };
            return `${session.status}/${session.end_reason}`;
          },
          { timeout: 30_000, interval: 500 },
        )
        .toBe('ended/deleted');
    } finally {
      await user.leave().catch(() => undefined);
    }
  }, 240_000);
});
