// SPDX-License-Identifier: GPL-3.0-or-later
import type { SessionError } from '../sessions/sessionErrors.js';

/** What the queue asks of the sessions' admission (sessions/creation/createAdmission.ts). */
export interface CreateJudge {
  /**
   * The refusal of a create with this secret (its hash), from memory, if its key's live and
   * starting sessions, with `passedOn` creates on their way to be judged, make its cap.
   */
  refusalFromMemory(secretHash: string, passedOn: number): SessionError | undefined;
  /** Whether a create with this secret was judged lately: its key is known by it. */
  knowsCreateSecret(secretHash: string): boolean;
  /** Calls `judged` each time a create with this secret is judged; returns the unsubscribe. */
  watchCreateJudgements(secretHash: string, judged: () => void): () => void;
}

/** One create in the listener: refused there, or passed on to the app. */
export interface QueuedCreate {
  refuse(error: SessionError): void;
  /** Sends it on to the app; `closed` runs once its answer is sent or its connection gone. */
  pass(closed: () => void): void;
}

interface SecretLine {
  /** Creates passed on to the app, oldest first, until their answer closes. */
  passed: { judged: boolean }[];
  /** Creates held here, in arrival order. */
  held: QueuedCreate[];
  /** Passes the held creates on when the create before them is slow to be judged. */
  holdLimit?: NodeJS.Timeout;
  unwatch: () => void;
}

/**
 * How long creates wait here for the create of their secret that finds its key: a lookup takes
 * milliseconds, but that create may be slow to reach its judgement (its body still arriving on a
 * slow link); past this, the creates held behind it go on to the app as they would have.
 */
export const CREATE_HOLD_LIMIT_MS = 250;

/**
 * A burst's creates, sorted in the listener by their secret, so that its first wave against a
 * key whose count the node does not know yet (a retry storm after a restart, or a second past
 * its last answer) is refused there, from memory, instead of each refusal going through the
 * framework, its middleware and the key's lookup to find the key full.
 *
 * Per secret: while its key is unknown, one create goes on to the app and the others wait here
 * for it to be judged (a lookup and a few microseconds after it reached the app). Once the key is
 * known, as many go on as it has room for, and the creates on their way to be judged hold their
 * slots like the creates starting (createAdmission.ts): the rest are refused here at once. A
 * create that goes on to the app and answers without being judged (a bad secret, a bad body, a
 * database outage) releases every create held behind it to the app, which answers them as it
 * would have, and so does a judgement slower than CREATE_HOLD_LIMIT_MS. So a create waits here
 * no longer than that, and the only answers that differ from the app's are refusals given while
 * creates on their way hold the last slots: had one of those failed, the refused one could have
 * fit.
 */
export class CreateQueue {
  private readonly lines = new Map<string, SecretLine>();

  constructor(
    private readonly judge: CreateJudge,
    private readonly holdLimitMs = CREATE_HOLD_LIMIT_MS,
  ) {}

  /** Refuses `create` from memory, passes it on to the app, or holds it until one of those. */
  route(secretHash: string, create: QueuedCreate): void {
    if (!this.lines.has(secretHash)) {
      // The retry storm's steady state, its key full and nothing on its way: no line to keep.
      const refusal = this.judge.refusalFromMemory(secretHash, 0);
      if (refusal) {
        create.refuse(refusal);
        return;
      }
    }
    this.lineOf(secretHash).held.push(create);
    this.release(secretHash);
  }

  /** Secrets with creates passed on or held (for tests). */
  get size(): number {
    return this.lines.size;
  }

  private lineOf(secretHash: string): SecretLine {
    let line = this.lines.get(secretHash);
    if (!line) {
      const created: SecretLine = { passed: [], held: [], unwatch: () => undefined };
      created.unwatch = this.judge.watchCreateJudgements(secretHash, () => {
        // The oldest create passed on and not judged yet is taken to be the one judged.
        const judged = created.passed.find((p) => !p.judged);
        if (judged) judged.judged = true;
        queueMicrotask(() => this.release(secretHash));
      });
      this.lines.set(secretHash, created);
      line = created;
    }
    return line;
  }

  /** Refuses or passes on the held creates that can be, in arrival order. */
  private release(secretHash: string): void {
    const line = this.lines.get(secretHash);
    if (!line) return;
    while (line.held.length > 0) {
      const judging = line.passed.filter((p) => !p.judged).length;
      if (!this.judge.knowsCreateSecret(secretHash)) {
        // An unknown key: one create goes on to find it; the others wait for its judgement.
        if (judging > 0) {
          line.holdLimit ??= setTimeout(() => {
            line.holdLimit = undefined;
            this.passHeld(secretHash, line);
          }, this.holdLimitMs).unref();
          break;
        }
        this.pass(secretHash, line, line.held.shift()!);
        continue;
      }
      const refusal = this.judge.refusalFromMemory(secretHash, judging);
      if (refusal) line.held.shift()!.refuse(refusal);
      else this.pass(secretHash, line, line.held.shift()!);
    }
    if (line.held.length === 0) {
      clearTimeout(line.holdLimit);
      line.holdLimit = undefined;
    }
    this.forgetIfIdle(secretHash, line);
  }

  /** Every create held goes on to the app, which answers them as it would have. */
  private passHeld(secretHash: string, line: SecretLine): void {
    for (const held of line.held.splice(0)) this.pass(secretHash, line, held);
  }

  private pass(secretHash: string, line: SecretLine, create: QueuedCreate): void {
    const entry = { judged: false };
    line.passed.push(entry);
    create.pass(() => {
      line.passed.splice(line.passed.indexOf(entry), 1);
      // Answered before its judgement: the app answers the others too, as it would have.
      if (!entry.judged) this.passHeld(secretHash, line);
      this.release(secretHash);
    });
  }

  private forgetIfIdle(secretHash: string, line: SecretLine): void {
    if (line.passed.length > 0 || line.held.length > 0) return;
    line.unwatch();
    this.lines.delete(secretHash);
  }
}
