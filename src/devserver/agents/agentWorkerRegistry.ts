// SPDX-License-Identifier: GPL-3.0-or-later
import { EventEmitter } from 'node:events';
import type { JobType } from '@livekit/protocol';
import type { AgentWorker } from './agentWorker.js';

export interface AgentWorkerRegistryEvents {
  workerRegistered: [worker: AgentWorker];
  workerLeft: [worker: AgentWorker];
}

/** The registered agent workers, and LiveKit's choice of one for a job. */
export class AgentWorkerRegistry extends EventEmitter<AgentWorkerRegistryEvents> {
  private readonly workers = new Set<AgentWorker>();

  add(worker: AgentWorker): void {
    this.workers.add(worker);
    this.emit('workerRegistered', worker);
  }

  remove(worker: AgentWorker): void {
    if (this.workers.delete(worker)) this.emit('workerLeft', worker);
  }

  list(): AgentWorker[] {
    return [...this.workers];
  }

  /** Whether any worker serves (agentName, jobType), available or not. */
  has(agentName: string, jobType: JobType): boolean {
    return this.list().some((w) => w.agentName === agentName && w.jobType === jobType);
  }

  /** Whether any worker registered under this agent name. */
  hasName(agentName: string): boolean {
    return this.list().some((w) => w.agentName === agentName);
  }

  /**
   * Picks an available worker for (agentName, jobType) at random, weighted by its spare
   * capacity (1 - load), as livekit-server does; undefined when there is none.
   */
  select(agentName: string, jobType: JobType, exclude: ReadonlySet<AgentWorker>) {
    const candidates = this.list().filter(
      (w) => w.isAvailable && w.agentName === agentName && w.jobType === jobType && !exclude.has(w),
    );
    if (candidates.length === 0) return undefined;
    const weights = candidates.map((w) => Math.max(0, 1 - w.load));
    const total = weights.reduce((sum, weight) => sum + weight, 0);
    if (total <= 0) return candidates[Math.floor(Math.random() * candidates.length)];
    let pick = Math.random() * total;
    for (let i = 0; i < candidates.length; i++) {
      pick -= weights[i]!;
      if (pick <= 0) return candidates[i];
    }
    return candidates[candidates.length - 1];
  }

  closeAll(): void {
    for (const worker of this.workers) worker.close();
  }
}
