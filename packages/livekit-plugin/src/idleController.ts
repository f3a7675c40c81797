// SPDX-License-Identifier: Apache-2.0
import { voice } from '@livekit/agents';
import { pluginLog } from './log.js';

/** What the controller parks and resumes: the session's ordered command queue. */
export interface WaitingStateTarget {
  readonly parked: boolean;
  setWaiting(waiting: boolean): Promise<void>;
}

/**
 * Parks the avatar (`waiting_state` true) after a quiet period in which neither side speaks, and
 * resumes it as soon as the conversation moves: the user starts speaking or the agent starts
 * thinking. The output also resumes before any `/speak` (through the same ordered queue), so a
 * `say()` that skips `thinking` still finds the avatar awake.
 *
 * Quiet means: the user is not speaking and the agent is `listening` or `idle`. While the agent
 * is `speaking` the avatar is never parked, because parking interrupts it.
 */
export class IdleController {
  readonly #session: voice.AgentSession;
  readonly #target: WaitingStateTarget;
  readonly #quietMs: number;
  #timer?: NodeJS.Timeout;
  #running = false;

  constructor(session: voice.AgentSession, target: WaitingStateTarget, quietMs: number) {
    this.#session = session;
    this.#target = target;
    this.#quietMs = quietMs;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#session.on(voice.AgentSessionEventTypes.AgentStateChanged, this.#evaluate);
    this.#session.on(voice.AgentSessionEventTypes.UserStateChanged, this.#evaluate);
    this.#evaluate();
  }

  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#session.off(voice.AgentSessionEventTypes.AgentStateChanged, this.#evaluate);
    this.#session.off(voice.AgentSessionEventTypes.UserStateChanged, this.#evaluate);
  }

  get quiet(): boolean {
    const agent = this.#session.agentState;
    return this.#session.userState !== 'speaking' && (agent === 'listening' || agent === 'idle');
  }

  #evaluate = (): void => {
    if (!this.#running) return;
    if (this.quiet) {
      if (!this.#timer && !this.#target.parked) {
        this.#timer = setTimeout(this.#park, this.#quietMs);
        this.#timer.unref?.();
      }
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#target.parked) this.#send(false);
  };

  #park = (): void => {
    this.#timer = undefined;
    if (!this.#running || !this.quiet) return;
    this.#send(true);
  };

  #send(waiting: boolean): void {
    pluginLog().debug({ waiting }, waiting ? 'parking the avatar' : 'resuming the avatar');
    this.#target.setWaiting(waiting).catch((err: unknown) => {
      pluginLog().warn({ err, waiting }, 'Visage waiting_state failed');
    });
  }
}
