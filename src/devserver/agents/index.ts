// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import type { HttpRouter } from '../service/httpServer.js';
import type { RoomRegistry } from '../service/roomRegistry.js';
import type { TwirpServer } from '../service/twirp/twirpServer.js';
import { AgentDispatcher } from './dispatcher.js';
import { agentDispatchService } from './dispatchService.js';
import { WorkerEndpoint } from './workerEndpoint.js';
import { AgentWorkerRegistry } from './agentWorkerRegistry.js';

export interface AgentServicesContext {
  rooms: RoomRegistry;
  http: HttpRouter;
  twirp: TwirpServer;
  keys: Readonly<Record<string, string>>;
  nodeId: string;
  log: Logger;
}

/** Agent dispatch on the dev server: the `/agent` worker endpoint and AgentDispatchService. */
export interface AgentServices {
  /** Registered LiveKit Agents workers; emits `workerRegistered` / `workerLeft`. */
  readonly workers: AgentWorkerRegistry;
  readonly dispatcher: AgentDispatcher;
  /** Disconnects every worker. */
  close(): void;
}

export function mountAgentServices(context: AgentServicesContext): AgentServices {
  const log = context.log.child({ component: 'agents' });
  const workers = new AgentWorkerRegistry();
  const dispatcher = new AgentDispatcher(context.rooms, workers);
  const endpoint = new WorkerEndpoint(workers, context.keys, context.nodeId, log);
  context.http.upgrade('/agent', (req, socket, head, url) =>
    endpoint.upgrade(req, socket, head, url),
  );
  context.twirp.register(
    'livekit.AgentDispatchService',
    agentDispatchService(context.rooms, dispatcher),
  );
  return {
    workers,
    dispatcher,
    close() {
      workers.closeAll();
      endpoint.close();
    },
  };
}

export type { AgentWorker } from './agentWorker.js';
export type { AgentDispatcher } from './dispatcher.js';
export type { AgentWorkerRegistry } from './agentWorkerRegistry.js';
