// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AgentDispatch,
  AgentDispatchState,
  DisconnectReason,
  Job,
  JobState,
  JobStatus,
  JobType,
  ParticipantInfo_Kind,
  RoomAgentDispatch,
  type SimulateJobRequest,
} from '@livekit/protocol';
import { newId } from '../rtc/ids.js';
import type { Participant } from '../rtc/participant.js';
import type { Room } from '../rtc/room.js';
import type { RoomOrigin, RoomRegistry } from '../service/roomRegistry.js';
import { buildAgentToken } from './agentToken.js';
import type { AgentWorker } from './agentWorker.js';
import type { AgentWorkerRegistry } from './agentWorkerRegistry.js';

/** How long DeleteDispatch waits for a terminated agent to leave before removing it. */
const AGENT_LEAVE_GRACE_MS = 3_000;

/** A job a worker accepted: it runs until its agent leaves, it is terminated, or it ends. */
interface RunningJob {
  job: Job;
  worker: AgentWorker;
  room: Room;
  dispatch?: AgentDispatch;
}

/** Per-room dispatch state. */
interface RoomAgents {
  dispatches: Map<string, AgentDispatch>;
  /** Running jobs by the identity their agent joins with. */
  byIdentity: Map<string, RunningJob>;
  /** Participants that published at least once (JT_PUBLISHER jobs start on the first). */
  published: WeakSet<Participant>;
}

type Offer = 'assigned' | 'declined' | 'done';

/**
 * Agent dispatch as livekit-server does it: every room gets its dispatches when it is created
 * (the token's or CreateRoom's `agents`, or one for agent name '' when there are none), more can
 * be added and deleted through AgentDispatchService; each dispatch launches a job once for the
 * room (JT_ROOM), for every participant that joins (JT_PARTICIPANT) and for every participant's
 * first publication (JT_PUBLISHER), each offered to a worker registered for that agent name and
 * job type. JS workers never report a job's end, so the server ends it when its agent leaves.
 */
export class AgentDispatcher {
  private readonly rooms = new WeakMap<Room, RoomAgents>();
  private readonly running = new Map<string, RunningJob>();
  private readonly registry: RoomRegistry;
  private readonly workers: AgentWorkerRegistry;

  constructor(registry: RoomRegistry, workers: AgentWorkerRegistry) {
    this.registry = registry;
    this.workers = workers;
    registry.on('roomCreated', (room, origin) => this.onRoomCreated(room, origin));
    workers.on('workerRegistered', (worker) => {
      worker.on('jobStatus', (jobId, status, error) =>
        this.onJobStatus(worker, jobId, status, error),
      );
      worker.on('simulateJob', (request) => void this.simulate(worker, request));
    });
    workers.on('workerLeft', (worker) => this.onWorkerLeft(worker));
  }

  /** The room's dispatches (all of them, or the one with `dispatchId`). */
  list(room: Room, dispatchId = ''): AgentDispatch[] {
    const dispatches = [...(this.rooms.get(room)?.dispatches.values() ?? [])];
    return dispatches.filter((d) => !dispatchId || d.id === dispatchId);
  }

  /** Adds a dispatch to a live room and launches its jobs; returns at once. */
  add(room: Room, request: { agentName: string; metadata: string }): AgentDispatch {
    const state = this.stateOf(room);
    const dispatch = new AgentDispatch({
      id: newId('AD_'),
      agentName: request.agentName,
      room: room.name,
      metadata: request.metadata,
      state: new AgentDispatchState({ createdAt: nowNs() }),
    });
    state.dispatches.set(dispatch.id, dispatch);
    room.log.info({ dispatch: dispatch.id, agentName: dispatch.agentName }, 'agent dispatch added');
    void this.launch(room, dispatch, JobType.JT_ROOM);
    for (const participant of room.participants.values()) {
      if (isDependent(participant)) continue;
      void this.launch(room, dispatch, JobType.JT_PARTICIPANT, participant);
      if (state.published.has(participant)) {
        void this.launch(room, dispatch, JobType.JT_PUBLISHER, participant);
      }
    }
    return dispatch;
  }

  /**
   * Deletes a dispatch: its running jobs are terminated, and agents that have not left after a
   * grace period are removed from the room.
   */
  async delete(room: Room, dispatchId: string): Promise<AgentDispatch | undefined> {
    const state = this.rooms.get(room);
    const dispatch = state?.dispatches.get(dispatchId);
    if (!state || !dispatch) return undefined;
    state.dispatches.delete(dispatchId);
    const jobs = [...this.running.values()].filter((r) => r.dispatch === dispatch);
    for (const running of jobs) this.end(running, JobStatus.JS_SUCCESS, '', true);
    const identities = jobs.map((r) => r.job.state?.participantIdentity ?? '');
    const deadline = Date.now() + AGENT_LEAVE_GRACE_MS;
    while (identities.some((i) => room.participant(i)) && Date.now() < deadline) {
      await sleep(50);
    }
    for (const identity of identities) {
      const participant = room.participant(identity);
      if (participant) room.remove(participant, DisconnectReason.PARTICIPANT_REMOVED);
    }
    dispatch.state ??= new AgentDispatchState();
    dispatch.state.deletedAt = nowNs();
    room.log.info({ dispatch: dispatch.id }, 'agent dispatch deleted');
    return dispatch;
  }

  // ---- room events ------------------------------------------------------------------------

  private stateOf(room: Room): RoomAgents {
    let state = this.rooms.get(room);
    if (!state) {
      state = { dispatches: new Map(), byIdentity: new Map(), published: new WeakSet() };
      this.rooms.set(room, state);
    }
    return state;
  }

  private onRoomCreated(room: Room, origin: RoomOrigin): void {
    const state = this.stateOf(room);
    room.on('participantJoined', (participant) => {
      if (isDependent(participant)) return;
      for (const dispatch of state.dispatches.values()) {
        void this.launch(room, dispatch, JobType.JT_PARTICIPANT, participant);
      }
    });
    room.on('trackPublished', (participant) => {
      if (isDependent(participant) || state.published.has(participant)) return;
      state.published.add(participant);
      for (const dispatch of state.dispatches.values()) {
        void this.launch(room, dispatch, JobType.JT_PUBLISHER, participant);
      }
    });
    room.on('participantLeft', (participant, reason) => {
      // A rejoin with the same identity replaced it: the agent is still there.
      if (reason === DisconnectReason.DUPLICATE_IDENTITY) return;
      const running = state.byIdentity.get(participant.identity);
      if (!running) return;
      if (room.isClosed) this.end(running, JobStatus.JS_SUCCESS, '', true);
      else this.end(running, JobStatus.JS_FAILED, 'agent worker left the room', true);
    });
    room.on('closed', () => {
      for (const running of [...this.running.values()]) {
        if (running.room === room) this.end(running, JobStatus.JS_SUCCESS, '', true);
      }
    });
    // Only a room's creation dispatches its configured agents, or the default unnamed one.
    const agents = origin.config?.agents.length
      ? origin.config.agents
      : [new RoomAgentDispatch({ agentName: '', metadata: '' })];
    for (const agent of agents) this.add(room, agent);
  }

  // ---- jobs -------------------------------------------------------------------------------

  /**
   * Offers a new job to the workers for (agentName, type), one after another, until one takes
   * it. No worker for it means no job (livekit-server does the same).
   */
  private async launch(
    room: Room,
    dispatch: AgentDispatch,
    type: JobType,
    participant?: Participant,
  ): Promise<void> {
    if (!this.workers.has(dispatch.agentName, type)) {
      // Every room gets the unnamed dispatch, and every dispatch tries all job types: only a
      // named agent without any worker is worth a warning.
      const unserved = dispatch.agentName !== '' && !this.workers.hasName(dispatch.agentName);
      const level = unserved && type === JobType.JT_ROOM ? 'warn' : 'debug';
      room.log[level](
        { agentName: dispatch.agentName, type: JobType[type] },
        'no agent worker registered for dispatch',
      );
      return;
    }
    const job = new Job({
      id: newId('AJ_'),
      dispatchId: dispatch.id,
      type,
      room: room.toInfo(),
      participant: participant?.toInfo(),
      metadata: dispatch.metadata,
      agentName: dispatch.agentName,
    });
    const tried = new Set<AgentWorker>();
    for (;;) {
      if (!this.isLive(room, dispatch)) return;
      const worker = this.workers.select(dispatch.agentName, type, tried);
      if (!worker) {
        room.log.warn(
          { job: job.id, agentName: dispatch.agentName, type: JobType[type] },
          'no available agent worker took the job',
        );
        return;
      }
      tried.add(worker);
      const outcome = await this.offer(worker, job, room, dispatch);
      if (outcome !== 'declined') return;
    }
  }

  /** AvailabilityRequest → AvailabilityResponse → JobAssignment with the agent's token. */
  private async offer(
    worker: AgentWorker,
    job: Job,
    room: Room,
    dispatch?: AgentDispatch,
  ): Promise<Offer> {
    const started = nowNs();
    job.state = new JobState({
      status: JobStatus.JS_RUNNING,
      workerId: worker.id,
      startedAt: started,
      updatedAt: started,
    });
    const log = room.log.child({ job: job.id, worker: worker.id });
    let answer;
    try {
      answer = await worker.requestAvailability(job);
    } catch (err) {
      // livekit-server gives up on a timeout; trying the next worker serves a dev box better.
      log.warn({ err }, 'agent worker did not answer the job offer');
      return 'declined';
    }
    if (answer.terminate) {
      this.record(dispatch, job, JobStatus.JS_SUCCESS);
      return 'done';
    }
    if (!answer.available) {
      log.info('agent worker declined the job');
      return 'declined';
    }
    // JS workers always name the agent `agent-<job id>`; keep that when a worker does not.
    answer.participantIdentity ||= `agent-${job.id}`;
    job.state.participantIdentity = answer.participantIdentity;
    const token = await buildAgentToken(
      worker.credentials,
      room.name,
      worker.agentName,
      answer,
      worker.permissions,
    );
    if (!this.isLive(room, dispatch) || !worker.isOpen) return 'done';
    worker.assign(job, token);
    const running: RunningJob = { job, worker, room, dispatch };
    this.running.set(job.id, running);
    this.rooms.get(room)?.byIdentity.set(answer.participantIdentity, running);
    dispatch?.state?.jobs.push(job);
    log.info(
      { agentName: worker.agentName, identity: answer.participantIdentity },
      'agent job assigned',
    );
    return 'assigned';
  }

  /** `lk`-style simulated job: assigned straight to the asking worker, without a dispatch. */
  private async simulate(worker: AgentWorker, request: SimulateJobRequest): Promise<void> {
    const room = request.room && this.registry.get(request.room.name);
    if (!room) {
      worker.log.warn({ room: request.room?.name }, 'simulated job for an unknown room');
      return;
    }
    const job = new Job({
      id: newId('AJ_'),
      type: request.type,
      room: room.toInfo(),
      participant: request.participant,
      agentName: worker.agentName,
    });
    await this.offer(worker, job, room);
  }

  private end(running: RunningJob, status: JobStatus, error: string, terminate: boolean): void {
    const { job, worker, room } = running;
    if (this.running.get(job.id) !== running) return;
    this.running.delete(job.id);
    const byIdentity = this.rooms.get(room)?.byIdentity;
    const identity = job.state?.participantIdentity ?? '';
    if (byIdentity?.get(identity) === running) byIdentity.delete(identity);
    const now = nowNs();
    job.state ??= new JobState();
    Object.assign(job.state, { status, error, endedAt: now, updatedAt: now });
    if (terminate) worker.terminate(job.id);
    else worker.runningJobs.delete(job.id);
    room.log.info({ job: job.id, status: JobStatus[status], error }, 'agent job ended');
  }

  private onJobStatus(worker: AgentWorker, jobId: string, status: JobStatus, error: string) {
    const running = this.running.get(jobId);
    if (!running || running.worker !== worker) return;
    if (status === JobStatus.JS_SUCCESS || status === JobStatus.JS_FAILED) {
      this.end(running, status, error, false);
    } else if (running.job.state) {
      running.job.state.status = status;
      running.job.state.updatedAt = nowNs();
    }
  }

  private onWorkerLeft(worker: AgentWorker): void {
    for (const running of [...this.running.values()]) {
      if (running.worker === worker) this.end(running, JobStatus.JS_FAILED, 'worker closed', false);
    }
  }

  private isLive(room: Room, dispatch?: AgentDispatch): boolean {
    if (room.isClosed || this.registry.get(room.name) !== room) return false;
    return !dispatch || this.rooms.get(room)?.dispatches.get(dispatch.id) === dispatch;
  }

  private record(dispatch: AgentDispatch | undefined, job: Job, status: JobStatus): void {
    if (!job.state) return;
    job.state.status = status;
    job.state.endedAt = nowNs();
    dispatch?.state?.jobs.push(job);
  }
}

/** Agents and recorders join because of others; they start no participant jobs of their own. */
function isDependent(participant: Participant): boolean {
  return (
    participant.kind === ParticipantInfo_Kind.AGENT ||
    participant.kind === ParticipantInfo_Kind.EGRESS
  );
}

function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
