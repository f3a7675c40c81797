// Agent dispatch with real, unmodified @livekit/agents 1.9 workers (`cli.runApp`, dev mode) run as
// child processes against the dev server: registration at /agent, automatic dispatch of unnamed
// workers, explicit dispatch through AgentDispatchClient, and dispatch from a token's room
// configuration. Each agent publishes a sine whose frequency comes from its job's metadata, and
// the human participant measures it.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { JobStatus } from '@livekit/protocol';
import {
  dispose,
  ParticipantKind,
  Room,
  RoomEvent,
  TrackKind,
  type RemoteParticipant,
  type RemoteTrack,
} from '@livekit/rtc-node';
import {
  AccessToken,
  AgentDispatchClient,
  RoomAgentDispatch,
  RoomConfiguration,
  RoomServiceClient,
} from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DevServer } from '../../src/devserver/index.js';
import { describeWebRtc } from '../support/network.js';
import {
  analyseAudio,
  API_KEY,
  API_SECRET,
  connect,
  startTestServer,
  until,
  waitForEvent,
} from './harness.js';

const WORKER_FILE = fileURLToPath(new URL('./agentDispatch.worker.ts', import.meta.url));
const NAMED_AGENT = 'test-agent';
// Worker start (tsx, the inference process) and a job's process fork take seconds on 2 cores.
const REGISTER_TIMEOUT_MS = 90_000;
const AGENT_JOIN_TIMEOUT_MS = 45_000;

interface WorkerProcess {
  child: ChildProcess;
  output: string[];
  stop(): Promise<void>;
}

/** Starts `agentDispatch.worker.ts dev` for `agentName` ('' = automatic dispatch). */
function startWorker(server: DevServer, agentName: string): WorkerProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LIVEKIT_URL: server.url,
    LIVEKIT_API_KEY: API_KEY,
    LIVEKIT_API_SECRET: API_SECRET,
  };
  delete env.LIVEKIT_AGENT_NAME;
  if (agentName) env.LIVEKIT_AGENT_NAME = agentName;
  // Its own process group, so that its job and inference processes go with it.
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_FILE, 'dev'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 400) output.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    child,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 8_000);
      await exited;
      clearTimeout(timer);
      try {
        // Job or inference processes that outlived the worker.
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // none left
      }
    },
  };
}

function isAgent(participant: RemoteParticipant): boolean {
  return participant.kind === ParticipantKind.AGENT;
}

/** Waits for an agent participant (matching `accept`) to join and its audio to be subscribed. */
async function agentAudio(
  room: Room,
  accept: (participant: RemoteParticipant) => boolean = () => true,
): Promise<{ agent: RemoteParticipant; track: RemoteTrack }> {
  const [track, , agent] = await waitForEvent<[RemoteTrack, unknown, RemoteParticipant]>(
    room,
    RoomEvent.TrackSubscribed,
    (track, _publication, participant) =>
      track.kind === TrackKind.KIND_AUDIO && isAgent(participant) && accept(participant),
    AGENT_JOIN_TIMEOUT_MS,
  );
  return { agent, track };
}

/** Joins with a token that carries a room configuration (used only if the join creates the room). */
async function connectWithConfig(
  server: DevServer,
  room: string,
  identity: string,
  config: RoomConfiguration,
): Promise<Room> {
  const at = new AccessToken(API_KEY, API_SECRET, { identity, ttl: '10m' });
  at.addGrant({ room, roomJoin: true });
  at.roomConfig = config;
  const client = new Room();
  await client.connect(server.url, await at.toJwt(), { autoSubscribe: true, dynacast: false });
  return client;
}

function agents(room: Room): RemoteParticipant[] {
  return [...room.remoteParticipants.values()].filter(isAgent);
}

describeWebRtc('dev server agent dispatch (@livekit/agents workers)', (address) => {
  let server: DevServer;
  const workers: WorkerProcess[] = [];
  let dispatchClient: AgentDispatchClient;
  let roomService: RoomServiceClient;

  beforeAll(async () => {
    server = await startTestServer(address);
    dispatchClient = new AgentDispatchClient(server.httpUrl, API_KEY, API_SECRET);
    roomService = new RoomServiceClient(server.httpUrl, API_KEY, API_SECRET);
    const registered = new Set<string>();
    server.agents.workers.on('workerRegistered', (worker) => registered.add(worker.agentName));
    workers.push(startWorker(server, ''), startWorker(server, NAMED_AGENT));
    try {
      await until(() => registered.size === 2, REGISTER_TIMEOUT_MS, 'both workers to register');
    } catch (err) {
      for (const worker of workers) console.error(worker.output.join(''));
      throw err;
    }
  }, REGISTER_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await server?.close();
    await dispose();
  }, 30_000);

  it('registers workers at /agent and refuses a token without the agent grant with 401', async () => {
    const names = server.agents.workers.list().map((w) => w.agentName);
    expect(names.sort()).toEqual(['', NAMED_AGENT]);
    expect(server.agents.workers.list().every((w) => w.id.startsWith('AW_'))).toBe(true);

    const refused = async (jwt: string) => {
      const ws = new WebSocket(`${server.url}/agent`, {
        headers: { authorization: `Bearer ${jwt}` },
      });
      // Terminating a socket that never opened reports an error; the status is what counts.
      ws.on('error', () => undefined);
      const [, response] = (await once(ws, 'unexpected-response')) as [
        unknown,
        { statusCode: number },
      ];
      ws.terminate();
      return response.statusCode;
    };
    const noAgentGrant = new AccessToken(API_KEY, API_SECRET);
    noAgentGrant.addGrant({ roomList: true });
    expect(await refused(await noAgentGrant.toJwt())).toBe(401);
    const wrongSecret = new AccessToken(API_KEY, 'not-the-secret');
    wrongSecret.addGrant({ agent: true });
    expect(await refused(await wrongSecret.toJwt())).toBe(401);
    expect(server.agents.workers.list()).toHaveLength(2);
  });

  it(
    'dispatches the unnamed worker when a join creates a room; the participant hears its agent',
    async () => {
      const alice = await connect(server, 'auto-room', 'alice');
      try {
        const { agent, track } = await agentAudio(alice);
        expect(agent.identity).toMatch(/^agent-AJ_/);
        expect(agent.attributes['lk.agent_name']).toBe('');
        const audio = await analyseAudio(track, 1_500);
        expect(audio.frames).toBeGreaterThan(50);
        expect(audio.rms).toBeGreaterThan(2_000);
        expect(audio.frequency).toBeGreaterThan(640);
        expect(audio.frequency).toBeLessThan(680);
        // The named worker opted out of automatic dispatch.
        expect(agents(alice)).toHaveLength(1);

        const [dispatch] = await dispatchClient.listDispatch('auto-room');
        expect(dispatch?.agentName).toBe('');
        expect(dispatch?.state?.jobs[0]?.state?.status).toBe(JobStatus.JS_RUNNING);
        expect(dispatch?.state?.jobs[0]?.state?.participantIdentity).toBe(agent.identity);

        // The agent leaving ends its job (JS workers never report it themselves).
        const left = waitForEvent(
          alice,
          RoomEvent.ParticipantDisconnected,
          (p: RemoteParticipant) => isAgent(p),
        );
        await roomService.removeParticipant('auto-room', agent.identity);
        await left;
        const [after] = await dispatchClient.listDispatch('auto-room');
        expect(after?.state?.jobs[0]?.state?.status).toBe(JobStatus.JS_FAILED);
        expect(after?.state?.jobs[0]?.state?.error).toBe('agent worker left the room');
      } finally {
        await alice.disconnect();
      }
    },
    AGENT_JOIN_TIMEOUT_MS + 30_000,
  );

  it(
    'dispatches a named agent through AgentDispatchClient and deletes the dispatch',
    async () => {
      const bob = await connect(server, 'explicit-room', 'bob');
      try {
        const isNamed = (p: RemoteParticipant) => p.attributes['lk.agent_name'] === NAMED_AGENT;
        const heard = agentAudio(bob, isNamed);
        const created = await dispatchClient.createDispatch('explicit-room', NAMED_AGENT, {
          metadata: JSON.stringify({ hz: 880 }),
        });
        expect(created.id).toMatch(/^AD_/);
        expect(created.agentName).toBe(NAMED_AGENT);
        const { agent, track } = await heard;
        const audio = await analyseAudio(track, 1_500);
        expect(audio.rms).toBeGreaterThan(2_000);
        expect(audio.frequency).toBeGreaterThan(860);
        expect(audio.frequency).toBeLessThan(900);

        const dispatches = await dispatchClient.listDispatch('explicit-room');
        expect(dispatches.map((d) => d.agentName).sort()).toEqual(['', NAMED_AGENT]);
        const fetched = await dispatchClient.getDispatch(created.id, 'explicit-room');
        expect(fetched?.state?.jobs[0]?.state?.participantIdentity).toBe(agent.identity);

        const left = waitForEvent(
          bob,
          RoomEvent.ParticipantDisconnected,
          (p: RemoteParticipant) => p.identity === agent.identity,
          10_000,
        );
        await dispatchClient.deleteDispatch(created.id, 'explicit-room');
        await left;
        const remaining = await dispatchClient.listDispatch('explicit-room');
        expect(remaining.map((d) => d.agentName)).toEqual(['']);
        await expect(dispatchClient.getDispatch(created.id, 'explicit-room')).resolves.toBe(
          undefined,
        );
      } finally {
        await bob.disconnect();
      }
    },
    AGENT_JOIN_TIMEOUT_MS + 30_000,
  );

  it('refuses AgentDispatchService calls without roomAdmin for the room', async () => {
    const at = new AccessToken(API_KEY, API_SECRET);
    at.addGrant({ roomAdmin: true, room: 'some-other-room' });
    const response = await fetch(
      `${server.httpUrl}/twirp/livekit.AgentDispatchService/CreateDispatch`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await at.toJwt()}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ room: 'explicit-room', agentName: NAMED_AGENT }),
      },
    );
    expect(response.status).toBe(403);
    expect(((await response.json()) as { code: string }).code).toBe('permission_denied');
  });

  it(
    "dispatches the agents of the token's room configuration when that join creates the room",
    async () => {
      const config = new RoomConfiguration({
        agents: [new RoomAgentDispatch({ agentName: NAMED_AGENT, metadata: '{"hz":550}' })],
      });
      const carol = await connectWithConfig(server, 'config-room', 'carol', config);
      try {
        const { track } = await agentAudio(carol);
        const audio = await analyseAudio(track, 1_500);
        expect(audio.rms).toBeGreaterThan(2_000);
        expect(audio.frequency).toBeGreaterThan(530);
        expect(audio.frequency).toBeLessThan(570);
        // Configured agents replace the default: the unnamed worker is not dispatched.
        const dispatches = await dispatchClient.listDispatch('config-room');
        expect(dispatches.map((d) => d.agentName)).toEqual([NAMED_AGENT]);

        // A later join with the same configuration does not dispatch again.
        const dave = await connectWithConfig(server, 'config-room', 'dave', config);
        await new Promise((resolve) => setTimeout(resolve, 4_000));
        expect(agents(carol)).toHaveLength(1);
        expect(await dispatchClient.listDispatch('config-room')).toHaveLength(1);
        await dave.disconnect();
      } finally {
        await carol.disconnect();
      }
    },
    AGENT_JOIN_TIMEOUT_MS + 30_000,
  );
});
