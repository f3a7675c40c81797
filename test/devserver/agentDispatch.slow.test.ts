// SPDX-License-Identifier: GPL-3.0-or-later
// Agent dispatch with real, unmodified @livekit/agents 1.9 workers (`cli.runApp`, dev mode) run as
// child processes against the dev server: registration at /agent, automatic dispatch of unnamed
// workers, explicit dispatch through AgentDispatchClient, and dispatch from a token's room
// configuration. Each agent publishes a sine whose frequency comes from its job's metadata, and
// the human participant measures it.
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  AvailabilityResponse,
  JobStatus,
  JobType,
  LeaveRequest,
  ParticipantInfo_Kind,
  ParticipantPermission,
  RegisterWorkerRequest,
  ServerMessage,
  SignalRequest,
  SimulateJobRequest,
  UpdateWorkerStatus,
  WorkerMessage,
  WorkerPing,
  WorkerStatus,
  type Job,
} from '@livekit/protocol';
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
  TokenVerifier,
} from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DevServer } from '../../src/devserver/index.js';
import { describeWebRtc } from '../support/network.js';
import { testLogPath } from '../support/testLog.js';
import {
  analyseSine,
  API_KEY,
  API_SECRET,
  connect,
  startTestServer,
  token,
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
  /** Where its stdout and stderr go (beside the dev server's log). */
  logPath: string;
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
  const logPath = testLogPath().replace(/\.log$/, `.worker-${agentName || 'auto'}.log`);
  const log = createWriteStream(logPath);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  return {
    child,
    logPath,
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
      for (const worker of workers) console.error(`agent worker output: ${worker.logPath}`);
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
        // A window at most 20 Hz off (a gap on a loaded machine skews one window's count).
        const audio = await analyseSine(track, 660, { ms: 1_500, toleranceHz: 20 });
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
        const audio = await analyseSine(track, 880, { ms: 1_500, toleranceHz: 20 });
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
        const audio = await analyseSine(track, 550, { ms: 1_500, toleranceHz: 20 });
        expect(audio.rms).toBeGreaterThan(2_000);
        expect(audio.frequency).toBeGreaterThan(530);
        expect(audio.frequency).toBeLessThan(570);
        // Configured agents replace the default: the unnamed worker is not dispatched.
        const dispatches = await dispatchClient.listDispatch('config-room');
        expect(dispatches.map((d) => d.agentName)).toEqual([NAMED_AGENT]);

        // A later join with the same configuration does not dispatch again.
        const dave = await connectWithConfig(server, 'config-room', 'dave', config);
        await sleep(4_000);
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

// ---- the worker protocol, with a scripted worker (no WebRTC needed) ----------------------------

type ServerValue<K> = Extract<ServerMessage['message'], { case: K }>['value'];

/** A worker speaking the protocol by hand, to check what the server sends and when. */
class ScriptedWorker {
  readonly received: ServerMessage[] = [];
  private readonly ws: WebSocket;
  private wake?: () => void;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data: Buffer) => {
      this.received.push(ServerMessage.fromBinary(data));
      this.wake?.();
    });
  }

  static async connect(server: DevServer): Promise<ScriptedWorker> {
    const at = new AccessToken(API_KEY, API_SECRET);
    at.addGrant({ agent: true });
    const ws = new WebSocket(`${server.url}/agent`, {
      headers: { authorization: `Bearer ${await at.toJwt()}` },
    });
    await once(ws, 'open');
    return new ScriptedWorker(ws);
  }

  send(message: WorkerMessage['message']): void {
    this.ws.send(new WorkerMessage({ message }).toBinary());
  }

  async register(agentName: string, permissions?: ParticipantPermission): Promise<string> {
    this.send({
      case: 'register',
      value: new RegisterWorkerRequest({
        agentName,
        version: 'scripted',
        allowedPermissions: permissions,
      }),
    });
    const response = await this.next('register');
    return response.workerId;
  }

  /** The next message of this kind (messages of other kinds stay queued). */
  async next<K extends NonNullable<ServerMessage['message']['case']>>(
    kind: K,
    timeoutMs = 5_000,
  ): Promise<ServerValue<K>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex((m) => m.message.case === kind);
      if (index >= 0) {
        const [message] = this.received.splice(index, 1);
        return message!.message.value as unknown as ServerValue<K>;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${kind} message within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Answers the next availability request with `available`, returns the job. */
  async answer(available: boolean, identity = ''): Promise<Job> {
    const { job } = await this.next('availability');
    this.send({
      case: 'availability',
      value: new AvailabilityResponse({
        jobId: job!.id,
        available,
        participantIdentity: identity,
        participantName: 'Scripted Agent',
        participantMetadata: '{"scripted":true}',
        participantAttributes: { role: 'tester' },
      }),
    });
    return job!;
  }

  close(): void {
    this.ws.close();
  }
}

/** Joins a room over a bare signal WebSocket (no media) and returns a way to leave. */
async function joinSignalOnly(server: DevServer, jwt: string) {
  const ws = new WebSocket(`${server.url}/rtc?access_token=${jwt}&protocol=16`);
  ws.on('error', () => undefined);
  await once(ws, 'message'); // the JoinResponse
  return {
    leave() {
      ws.send(
        new SignalRequest({
          message: { case: 'leave', value: new LeaveRequest({}) },
        }).toBinary(),
      );
      ws.close();
    },
  };
}

describe('agent worker protocol (scripted worker, no media)', () => {
  let server: DevServer;
  let rooms: RoomServiceClient;
  let dispatch: AgentDispatchClient;
  const workers: ScriptedWorker[] = [];
  const worker = async () => {
    const w = await ScriptedWorker.connect(server);
    workers.push(w);
    return w;
  };

  beforeAll(async () => {
    server = await startTestServer('127.0.0.1');
    rooms = new RoomServiceClient(server.httpUrl, API_KEY, API_SECRET);
    dispatch = new AgentDispatchClient(server.httpUrl, API_KEY, API_SECRET);
  });
  afterAll(async () => {
    for (const w of workers) w.close();
    await server?.close();
  });

  it('answers register first, then pings with pongs', async () => {
    const w = await worker();
    w.send({ case: 'ping', value: new WorkerPing({ timestamp: 42n }) });
    const workerId = await w.register('pong-agent');
    expect(workerId).toMatch(/^AW_/);
    // Nothing came before the registration answer: the ping was not answered.
    expect(w.received).toEqual([]);
    w.send({ case: 'ping', value: new WorkerPing({ timestamp: 43n }) });
    const pong = await w.next('pong');
    expect(pong.lastTimestamp).toBe(43n);
    w.close();
  });

  it('assigns a job with an agent token made from the availability answer', async () => {
    const w = await worker();
    await w.register(
      'token-agent',
      new ParticipantPermission({ canSubscribe: true, canPublish: false, canPublishData: true }),
    );
    const created = await dispatch.createDispatch('token-room', 'token-agent', {
      metadata: 'job metadata',
    });
    const job = await w.answer(true, 'agent-token');
    expect(job.room?.name).toBe('token-room');
    expect(job.agentName).toBe('token-agent');
    expect(job.dispatchId).toBe(created.id);
    expect(job.metadata).toBe('job metadata');
    expect(job.type).toBe(JobType.JT_ROOM);
    const assignment = await w.next('assignment');
    expect(assignment.job?.id).toBe(job.id);
    expect(assignment.job?.state?.status).toBe(JobStatus.JS_RUNNING);

    const claims = await new TokenVerifier(API_KEY, API_SECRET).verify(assignment.token);
    expect(claims.sub).toBe('agent-token');
    expect(claims.kind).toBe('agent');
    expect(claims.name).toBe('Scripted Agent');
    expect(claims.metadata).toBe('{"scripted":true}');
    expect(claims.attributes).toEqual({ role: 'tester', 'lk.agent_name': 'token-agent' });
    expect(claims.video).toMatchObject({
      roomJoin: true,
      room: 'token-room',
      agent: true,
      canPublish: false,
      canSubscribe: true,
    });
    // CreateDispatch created the room, which (as in livekit-server) got the default dispatch too.
    const names = (await dispatch.listDispatch('token-room')).map((d) => d.agentName);
    expect(names.sort()).toEqual(['', 'token-agent']);
  });

  it('starts a participant job for every participant that joins, but not for agents', async () => {
    const w = await worker();
    w.send({
      case: 'register',
      value: new RegisterWorkerRequest({ agentName: 'each-agent', type: JobType.JT_PARTICIPANT }),
    });
    await w.next('register');
    await dispatch.createDispatch('each-room', 'each-agent');
    const alice = await joinSignalOnly(server, await token('each-room', 'alice'));
    const job = await w.answer(true, 'agent-for-alice');
    expect(job.type).toBe(JobType.JT_PARTICIPANT);
    expect(job.participant?.identity).toBe('alice');
    const { token: agentToken } = await w.next('assignment');
    const agent = await joinSignalOnly(server, agentToken);
    const bob = await joinSignalOnly(server, await token('each-room', 'bob'));
    expect((await w.answer(true, 'agent-for-bob')).participant?.identity).toBe('bob');
    await w.next('assignment');
    await sleep(300);
    // The agent's own join started nothing.
    expect(w.received.filter((m) => m.message.case === 'availability')).toEqual([]);
    for (const p of [alice, agent, bob]) p.leave();
  });

  it('skips full workers and offers a declined job to the next worker', async () => {
    const full = await worker();
    await full.register('pool-agent');
    full.send({
      case: 'updateWorker',
      value: new UpdateWorkerStatus({ status: WorkerStatus.WS_FULL, load: 1 }),
    });
    const declining = await worker();
    await declining.register('pool-agent');
    const taking = await worker();
    await taking.register('pool-agent');
    // A load update without a status keeps the worker's status. Workers are picked weighted by
    // spare capacity, so the declining one is almost always asked first.
    taking.send({ case: 'updateWorker', value: new UpdateWorkerStatus({ load: 0.99 }) });
    const pool = () => server.agents.workers.list().filter((x) => x.agentName === 'pool-agent');
    await until(
      () =>
        pool().filter((x) => x.status === WorkerStatus.WS_FULL).length === 1 &&
        pool().some((x) => Math.abs(x.load - 0.99) < 1e-6 && x.isAvailable),
      5_000,
      'status updates',
    );

    await dispatch.createDispatch('pool-room', 'pool-agent');
    // Whichever available worker is asked first, the one that takes the job gets it.
    const declined = declining.answer(false).catch(() => undefined);
    await taking.answer(true, 'agent-pool');
    await taking.next('assignment');
    await declined;
    expect(declining.received.filter((m) => m.message.case === 'assignment')).toEqual([]);
    expect(full.received).toEqual([]);
  });

  it('ends a job when its agent leaves, and terminates jobs of deleted dispatches and rooms', async () => {
    const w = await worker();
    await w.register('life-agent');
    const created = await dispatch.createDispatch('life-room', 'life-agent');
    const job = await w.answer(true, 'agent-life');
    const { token: agentToken } = await w.next('assignment');

    const agent = await joinSignalOnly(server, agentToken);
    const participant = server.rooms.get('life-room')!.participant('agent-life')!;
    expect(participant.kind).toBe(ParticipantInfo_Kind.AGENT);
    expect(participant.attributes).toEqual({ role: 'tester', 'lk.agent_name': 'life-agent' });
    agent.leave();
    expect((await w.next('termination')).jobId).toBe(job.id);
    const [ended] = (await dispatch.getDispatch(created.id, 'life-room'))!.state!.jobs;
    expect(ended?.state?.status).toBe(JobStatus.JS_FAILED);
    expect(ended?.state?.error).toBe('agent worker left the room');

    const second = await dispatch.createDispatch('life-room', 'life-agent');
    const secondJob = await w.answer(true, 'agent-life-2');
    await w.next('assignment');
    await dispatch.deleteDispatch(second.id, 'life-room');
    expect((await w.next('termination')).jobId).toBe(secondJob.id);
    expect((await dispatch.listDispatch('life-room')).map((d) => d.id)).not.toContain(second.id);

    await dispatch.createDispatch('life-room', 'life-agent');
    const thirdJob = await w.answer(true, 'agent-life-3');
    await w.next('assignment');
    await rooms.deleteRoom('life-room');
    expect((await w.next('termination')).jobId).toBe(thirdJob.id);
  });

  it('offers a simulated job (the agents CLI `connect --room`) to the worker that asked', async () => {
    const w = await worker();
    await w.register('sim-agent');
    // The CLI creates the room first (RoomService), then asks for the job.
    const room = await rooms.createRoom({ name: 'sim-room' });
    w.send({
      case: 'simulateJob',
      value: new SimulateJobRequest({ type: JobType.JT_PUBLISHER, room }),
    });
    const job = await w.answer(true, 'agent-sim');
    expect(job.room?.name).toBe('sim-room');
    expect(job.type).toBe(JobType.JT_PUBLISHER);
    expect(job.dispatchId).toBe('');
    expect((await w.next('assignment')).job?.id).toBe(job.id);
  });

  it('dispatches rooms created by RoomService with their agents, and refuses unknown rooms', async () => {
    const w = await worker();
    await w.register('api-agent');
    await rooms.createRoom({
      name: 'api-room',
      agents: [new RoomAgentDispatch({ agentName: 'api-agent', metadata: 'from CreateRoom' })],
    });
    const job = await w.answer(true, 'agent-api');
    expect(job.metadata).toBe('from CreateRoom');
    await w.next('assignment');
    await expect(dispatch.listDispatch('no-such-room')).rejects.toThrow(/not found/);
  });
});
