// SPDX-License-Identifier: GPL-3.0-or-later
import { EventEmitter } from 'node:events';
import {
  AvailabilityRequest,
  JobAssignment,
  JobTermination,
  JobType,
  ParticipantPermission,
  RegisterWorkerResponse,
  ServerInfo,
  ServerInfo_Edition,
  ServerMessage,
  WorkerMessage,
  WorkerPong,
  WorkerStatus,
  type AvailabilityResponse,
  type Job,
  type JobStatus,
  type SimulateJobRequest,
} from '@livekit/protocol';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import { newId } from '../rtc/ids.js';
import { SERVER_PROTOCOL, SERVER_VERSION } from '../rtc/joinResponse.js';

/** LiveKit waits this long for a worker's answer to an AvailabilityRequest. */
export const AVAILABILITY_TIMEOUT_MS = 10_000;

export interface AgentWorkerEvents {
  registered: [];
  /** UpdateJobStatus (Python workers; JS workers never send it). */
  jobStatus: [jobId: string, status: JobStatus, error: string];
  simulateJob: [request: SimulateJobRequest];
  closed: [];
}

export interface WorkerCredentials {
  apiKey: string;
  apiSecret: string;
}

export class WorkerUnavailableError extends Error {}

interface PendingAvailability {
  resolve: (response: AvailabilityResponse) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One LiveKit Agents worker connected at `/agent`: its registration, load and status, and the
 * availability → assignment → termination exchange for each job offered to it.
 */
export class AgentWorker extends EventEmitter<AgentWorkerEvents> {
  readonly id = newId('AW_');
  readonly credentials: WorkerCredentials;
  agentName = '';
  jobType = JobType.JT_ROOM;
  version = '';
  /** Grants of every agent token this worker's jobs get. */
  permissions = new ParticipantPermission({
    canSubscribe: true,
    canPublish: true,
    canPublishData: true,
    agent: true,
  });
  status = WorkerStatus.WS_AVAILABLE;
  load = 0;
  /** Jobs assigned to this worker that have not ended, by job id. */
  readonly runningJobs = new Map<string, Job>();
  private registeredAt?: number;
  private readonly pending = new Map<string, PendingAvailability>();
  private readonly ws: WebSocket;
  private readonly serverInfo: ServerInfo;
  log: Logger;

  constructor(ws: WebSocket, credentials: WorkerCredentials, nodeId: string, log: Logger) {
    super();
    this.ws = ws;
    this.credentials = credentials;
    this.log = log.child({ worker: this.id });
    this.serverInfo = new ServerInfo({
      edition: ServerInfo_Edition.Standard,
      version: SERVER_VERSION,
      protocol: SERVER_PROTOCOL,
      agentProtocol: 1,
      nodeId,
      region: 'local',
    });
  }

  get isRegistered(): boolean {
    return this.registeredAt !== undefined;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  get isAvailable(): boolean {
    return this.isRegistered && this.isOpen && this.status === WorkerStatus.WS_AVAILABLE;
  }

  handle(message: WorkerMessage): void {
    const { case: kind, value } = message.message;
    switch (kind) {
      case 'register': {
        if (this.isRegistered) {
          this.log.warn('worker registered twice; ignored');
          return;
        }
        if (!(value.type in JobType)) {
          this.log.warn({ type: value.type }, 'unknown job type; closing');
          this.close();
          return;
        }
        this.agentName = value.agentName;
        this.jobType = value.type;
        this.version = value.version;
        if (value.allowedPermissions) {
          this.permissions = new ParticipantPermission({
            ...value.allowedPermissions,
            agent: true,
          });
        }
        this.registeredAt = Date.now();
        // Must be the first message the worker gets: it throws on anything else.
        this.send({
          case: 'register',
          value: new RegisterWorkerResponse({ workerId: this.id, serverInfo: this.serverInfo }),
        });
        this.log = this.log.child({ agentName: this.agentName });
        this.log.info(
          { type: JobType[this.jobType], version: this.version },
          'agent worker registered',
        );
        this.emit('registered');
        return;
      }
      case 'availability': {
        const pending = this.pending.get(value.jobId);
        if (!pending) {
          this.log.debug({ job: value.jobId }, 'availability for unknown job');
          return;
        }
        this.pending.delete(value.jobId);
        clearTimeout(pending.timer);
        pending.resolve(value);
        return;
      }
      case 'updateWorker':
        // WS_AVAILABLE is the proto3 default, so an absent status means "unchanged".
        if (value.status !== undefined) this.status = value.status;
        this.load = value.load;
        return;
      case 'updateJob':
        this.emit('jobStatus', value.jobId, value.status, value.error);
        return;
      case 'ping':
        if (!this.isRegistered) return;
        this.send({
          case: 'pong',
          value: new WorkerPong({ lastTimestamp: value.timestamp, timestamp: BigInt(Date.now()) }),
        });
        return;
      case 'simulateJob':
        if (this.isRegistered) this.emit('simulateJob', value);
        return;
      default:
        // migrateJob: the open-source server ignores it too.
        return;
    }
  }

  /** Offers a job; resolves with the worker's answer, rejects when it does not answer in time. */
  requestAvailability(job: Job): Promise<AvailabilityResponse> {
    if (!this.isOpen) return Promise.reject(new WorkerUnavailableError('worker closed'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(job.id);
        reject(new Error(`worker ${this.id} did not answer availability for ${job.id}`));
      }, AVAILABILITY_TIMEOUT_MS);
      timer.unref();
      this.pending.set(job.id, { resolve, reject, timer });
      this.send({ case: 'availability', value: new AvailabilityRequest({ job }) });
    });
  }

  assign(job: Job, token: string): void {
    this.runningJobs.set(job.id, job);
    // No url: the job joins through the same URL the worker registered at.
    this.send({ case: 'assignment', value: new JobAssignment({ job, token }) });
  }

  /** Tells the worker to stop a job (it shuts the job's process down). */
  terminate(jobId: string): void {
    this.runningJobs.delete(jobId);
    this.send({ case: 'termination', value: new JobTermination({ jobId }) });
  }

  /** Called when the socket closed: fails what is still waiting for an answer. */
  onClosed(): void {
    for (const [jobId, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new WorkerUnavailableError(`worker closed before answering ${jobId}`));
    }
    this.pending.clear();
    this.emit('closed');
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.close();
    }
  }

  private send(message: ServerMessage['message']): void {
    if (!this.isOpen) return;
    this.ws.send(new ServerMessage({ message }).toBinary(), (err) => {
      if (err) this.log.debug({ err, message: message.case }, 'worker send failed');
    });
  }
}
