// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import type { ClaimedCommand, ClusterStore } from '../store/clusterStore.js';
import { errorReply } from '../sessions/routing/sessionCommand.js';

/** The session manager, seen from the cluster: it applies what other nodes hand over. */
export interface CommandApplier {
  /** Applies one command addressed to this node; resolves with the reply (JSON). */
  apply(command: ClaimedCommand): Promise<unknown>;
  /** Sessions this node runs may have been ended in the database by someone else: look now. */
  reconcile(): Promise<void>;
}

/** How long a node remembers the commands it applied (longer than any reply takes). */
const APPLIED_MEMORY_MS = 5 * 60_000;

/**
 * The commands other nodes address to this one: each is applied once, in the order they were
 * inserted (through the `CommandApplier`, the session manager), and answered (a reply row and a
 * NOTIFY back to the node that asked). They come in their NOTIFY, or are claimed from their
 * rows (on a NOTIFY that only says "look", after a reconnection, at each heartbeat).
 */
export class CommandInbox {
  private applier: CommandApplier | undefined;
  private claiming = false;
  private claimAgain = false;
  private closed = false;
  /** Commands applied lately (id -> when), so that none is applied twice. */
  private readonly applied = new Map<string, number>();

  constructor(
    private readonly db: ClusterStore,
    private readonly nodeId: string,
    private readonly log: Logger,
  ) {}

  /** Starts applying the commands addressed to this node (those waiting included). */
  serve(applier: CommandApplier): void {
    this.applier = applier;
    this.claim();
  }

  /**
   * A command that came in its NOTIFY. Notifications arrive in commit order: applied as they
   * come, in order. While a claim is under way (a command with bytes came first), this one waits
   * its turn in the claim.
   */
  arrived(c: ClaimedCommand): void {
    if (this.applier && !this.closed && !this.claiming) this.applyAndReply(c);
    else this.claim();
  }

  /** Claims and applies this node's pending commands; one claim at a time, in order. */
  claim(): void {
    this.claimNow().catch((err: unknown) => {
      this.log.warn({ err }, 'could not claim commands (retried at the next heartbeat)');
    });
  }

  async claimNow(): Promise<void> {
    if (!this.applier || this.closed) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    try {
      do {
        this.claimAgain = false;
        const commands = await this.db.claimCommands(this.nodeId);
        // Applied in order: each is queued on its session before the next is looked at.
        for (const c of commands) if (!this.applied.has(c.id)) this.applyAndReply(c);
      } while (this.claimAgain);
    } finally {
      this.claiming = false;
    }
  }

  /** Applies nothing more (the node is leaving). */
  close(): void {
    this.closed = true;
  }

  /** Forgets the commands answered long ago: their rows are done (never claimed again) or deleted. */
  forgetOld(): void {
    for (const [id, at] of this.applied) {
      if (Date.now() - at < APPLIED_MEMORY_MS) break;
      this.applied.delete(id);
    }
  }

  private applyAndReply(c: ClaimedCommand): void {
    // A command that came in its NOTIFY may also be claimed from its row: applied once.
    if (this.applied.has(c.id)) return;
    this.applied.set(c.id, Date.now());
    const applier = this.applier!;
    let outcome: Promise<unknown>;
    try {
      outcome = applier.apply(c);
    } catch (err) {
      outcome = Promise.reject(err);
    }
    void outcome
      .then(
        (ok) => ({ ok: ok ?? null }),
        (err: unknown) => {
          const reply = errorReply(err);
          if (reply.error.code === 'internal') {
            this.log.error({ err, command: c.kind, session_id: c.sessionId }, 'a command failed');
          }
          return reply;
        },
      )
      .then((reply) => this.db.reply(c.id, c.replyNode, reply))
      .catch((err: unknown) => {
        this.log.warn({ err, command: c.kind, session_id: c.sessionId }, 'could not reply');
      });
  }
}
