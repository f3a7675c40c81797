// SPDX-License-Identifier: GPL-3.0-or-later
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WorkerMessage } from '@livekit/protocol';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { tokenFromRequest, verifyAccessToken } from '../service/accessToken.js';
import { rejectUpgrade } from '../service/httpResponses.js';
import { AgentWorker } from './agentWorker.js';
import type { AgentWorkerRegistry } from './agentWorkerRegistry.js';

/** livekit-server closes a worker connection that has not registered within this time. */
const REGISTER_TIMEOUT_MS = 10_000;

/**
 * `/agent`: LiveKit Agents workers connect here with `Authorization: Bearer <jwt>` carrying the
 * `agent` grant (refused with 401 before the upgrade otherwise), then speak binary protobuf
 * WorkerMessage / ServerMessage. A worker joins the registry once it registered.
 */
export class WorkerEndpoint {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly workers: AgentWorkerRegistry;
  private readonly keys: Readonly<Record<string, string>>;
  private readonly nodeId: string;
  private readonly log: Logger;

  constructor(
    workers: AgentWorkerRegistry,
    keys: Readonly<Record<string, string>>,
    nodeId: string,
    log: Logger,
  ) {
    this.workers = workers;
    this.keys = keys;
    this.nodeId = nodeId;
    this.log = log;
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    // Workers send the token only in the header; the query is accepted like on /rtc.
    const check = await verifyAccessToken(
      tokenFromRequest(req.headers.authorization, url.searchParams),
      this.keys,
    );
    if (!check.ok) {
      this.log.info({ reason: check.reason }, 'agent worker refused');
      rejectUpgrade(socket, 401, check.reason);
      return;
    }
    if (!check.claims.video?.agent) {
      this.log.info('agent worker refused: no agent grant');
      rejectUpgrade(socket, 401, 'permissions denied: agent not granted');
      return;
    }
    const credentials = { apiKey: check.apiKey, apiSecret: this.keys[check.apiKey]! };
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, credentials));
  }

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  private accept(ws: WebSocket, credentials: { apiKey: string; apiSecret: string }): void {
    const worker = new AgentWorker(ws, credentials, this.nodeId, this.log);
    const registerTimer = setTimeout(() => {
      worker.log.info('agent worker did not register in time; closing');
      worker.close();
    }, REGISTER_TIMEOUT_MS);
    registerTimer.unref();
    worker.once('registered', () => {
      clearTimeout(registerTimer);
      this.workers.add(worker);
    });
    ws.on('message', (data, isBinary) => {
      // The protocol is binary only; the SDKs never send text frames.
      if (!isBinary) return;
      let message: WorkerMessage;
      try {
        message = WorkerMessage.fromBinary(toBuffer(data));
      } catch (err) {
        worker.log.debug({ err }, 'undecodable worker message');
        return;
      }
      worker.handle(message);
    });
    ws.on('error', (err) => worker.log.debug({ err }, 'worker socket error'));
    ws.on('close', () => {
      clearTimeout(registerTimer);
      worker.log.info({ jobs: worker.runningJobs.size }, 'agent worker disconnected');
      this.workers.remove(worker);
      worker.onClosed();
    });
  }
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
