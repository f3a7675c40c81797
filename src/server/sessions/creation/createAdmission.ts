// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * How long a key's live count, as the database last answered it, refuses creates of that key
 * without asking the database again. Sessions this node ends forget it at once; only a session
 * ended by another process (a node of the cluster) can go unseen, for this long at most.
 */
export const LIVE_COUNT_TRUSTED_MS = 1_000;

/** A create let through to the database; `settle` it once the database has answered. */
export interface CreateTicket {
  readonly keyId: string;
  /** The key's end count when the create came in: a count read before a later end is stale. */
  readonly ends: number;
}

export interface Refusal {
  /** The key's sessions live (as the database last counted them) or starting on this node. */
  active: number;
  cap: number;
  /** Of `active`, the creates of this node still under way. */
  starting: number;
}

interface KeyState {
  /** The key's cap and the hash of its secret, as its last create here authenticated them. */
  cap: number;
  secretHash?: string;
  /** Creates of this key admitted on this node and not answered yet: each holds a slot. */
  starting: number;
  /** The key's live sessions, as the database last answered, and when. */
  live?: number;
  at?: number;
  /** Sessions of this key this node has ended (or changes to the key). */
  ends: number;
}

/**
 * The fast refusal in front of the exact cap (the database's check-and-insert, one transaction
 * per create), in memory, per node and per key: a burst of creates against a key at its cap (a
 * retry storm) is answered from memory, while the creates that can succeed go through the
 * database, which stays the judge of what is let in.
 *
 * A create holds a slot of its key from the moment it is admitted here until it is answered,
 * like a session: it is refused, without a query, when the key's live sessions as the database
 * last counted them, plus the creates of this node still starting, make its cap. So a burst's
 * first wave is refused as soon as the creates that fit are on their way, not after the
 * database has counted them; the price is that a create refused while another is starting could
 * have fit had that other one failed (it answers 429 with Retry-After, as at the cap). Nothing
 * is ever let in on a remembered count: every create admitted here is counted again, exactly, in
 * the database's transaction.
 *
 * A refusal can come before the request is authenticated (`refusalFor`, by the hash of the
 * secret its key's last create here came with): a burst then costs no query at all. A session
 * this node ends, a cap it changes or a key it revokes apply at once (`ended`, `keyChanged`);
 * a session another process ends, within LIVE_COUNT_TRUSTED_MS. A count older than that is
 * trusted only while a create of the key is on its way to refresh it.
 */
export class CreateAdmission {
  private readonly keys = new Map<string, KeyState>();
  /** Key ids by the hash of their secret. */
  private readonly bySecret = new Map<string, string>();
  /** Who is told of each create of a secret (its hash) judged here (`watchJudgements`). */
  private readonly judgedWatchers = new Map<string, Set<() => void>>();

  constructor(
    private readonly trustedMs = LIVE_COUNT_TRUSTED_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Lets a create of `keyId` through to the database (hold the ticket until it is answered), or
   * refuses it: its key's live and starting sessions make its cap.
   */
  enter(
    keyId: string,
    cap: number,
    secretHash?: string,
  ): { ticket: CreateTicket } | { refused: Refusal } {
    const s = this.stateOf(keyId, cap, secretHash);
    const refused = this.refusalOf(s);
    if (refused) this.forgetIdle(keyId, s);
    else s.starting++;
    if (secretHash !== undefined) this.judged(secretHash);
    return refused ? { refused } : { ticket: { keyId, ends: s.ends } };
  }

  /**
   * Calls `judged` each time a create that comes with this secret (its hash) is judged here,
   * let through or refused (then `knows` and `refusalFor` know its key), until unsubscribed.
   */
  watchJudgements(secretHash: string, judged: () => void): () => void {
    const watchers = this.judgedWatchers.get(secretHash) ?? new Set();
    watchers.add(judged);
    this.judgedWatchers.set(secretHash, watchers);
    return () => {
      watchers.delete(judged);
      if (watchers.size === 0) this.judgedWatchers.delete(secretHash);
    };
  }

  /** Whether a create with this secret was judged here lately (its key is known by it). */
  knows(secretHash: string): boolean {
    const keyId = this.bySecret.get(secretHash);
    return keyId !== undefined && this.keys.has(keyId);
  }

  /**
   * The refusal of a create that comes with this secret (its hash), when its key's last create
   * here came with it and its live and starting sessions, with `passedOn` more creates on their
   * way to be judged, make its cap; else undefined (the create goes the whole way:
   * authenticated, then `enter`).
   */
  refusalFor(secretHash: string, passedOn = 0): (Refusal & { keyId: string }) | undefined {
    const keyId = this.bySecret.get(secretHash);
    const s = keyId === undefined ? undefined : this.keys.get(keyId);
    const refused = s && this.refusalOf(s, passedOn);
    return refused && { keyId: keyId!, ...refused };
  }

  /**
   * The database answered the ticket's create: `live` is the key's live count it gave (absent
   * when the create failed before counting), kept unless this node ended a session of the key
   * since the create came in.
   */
  settle(ticket: CreateTicket, live?: number): void {
    const s = this.keys.get(ticket.keyId);
    if (!s) return;
    s.starting = Math.max(0, s.starting - 1);
    if (live !== undefined && ticket.ends === s.ends) {
      s.live = live;
      s.at = this.now();
    }
    this.forgetIdle(ticket.keyId, s);
  }

  /** This node ended a session of the key (its end is in the database): forget the count. */
  ended(keyId: string): void {
    const s = this.keys.get(keyId);
    if (!s) return;
    s.ends++;
    s.live = undefined;
    s.at = undefined;
    this.forgetIdle(keyId, s);
  }

  /** The key was revoked or its cap changed: forget all about it (the next create asks). */
  keyChanged(keyId: string): void {
    const s = this.keys.get(keyId);
    if (!s) return;
    if (s.secretHash !== undefined) this.bySecret.delete(s.secretHash);
    s.secretHash = undefined;
    this.ended(keyId);
  }

  private judged(secretHash: string): void {
    for (const judged of this.judgedWatchers.get(secretHash) ?? []) judged();
  }

  /** Keys with a create on its way or a count known (for tests and diagnostics). */
  get size(): number {
    return this.keys.size;
  }

  private stateOf(keyId: string, cap: number, secretHash: string | undefined): KeyState {
    const s = this.keys.get(keyId) ?? { cap, starting: 0, ends: 0 };
    s.cap = cap;
    if (secretHash !== undefined && s.secretHash !== secretHash) {
      if (s.secretHash !== undefined) this.bySecret.delete(s.secretHash);
      s.secretHash = secretHash;
      this.bySecret.set(secretHash, keyId);
    }
    this.keys.set(keyId, s);
    return s;
  }

  /**
   * The refusal of the key's next create, if its live and starting sessions (and `passedOn`
   * creates on their way to `enter`) make its cap.
   */
  private refusalOf(s: KeyState, passedOn = 0): Refusal | undefined {
    const live = this.trustedLive(s);
    if (live + s.starting + passedOn < s.cap) return undefined;
    const starting = Math.min(s.starting + passedOn, Math.max(0, s.cap - live));
    return { active: Math.max(live, s.cap), cap: s.cap, starting };
  }

  private trustedLive(s: KeyState): number {
    if (s.live === undefined || s.at === undefined) return 0;
    return this.now() - s.at <= this.trustedMs || s.starting > 0 ? s.live : 0;
  }

  private forgetIdle(keyId: string, s: KeyState): void {
    if (s.starting > 0 || s.live !== undefined) return;
    this.keys.delete(keyId);
    if (s.secretHash !== undefined) this.bySecret.delete(s.secretHash);
  }
}
