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
  /** The key's live sessions, as the database counted them. */
  active: number;
  cap: number;
}

interface KeyState {
  /** The key's cap and the hash of its secret, as its last create here authenticated them. */
  cap: number;
  secretHash?: string;
  /** Creates of this key on their way to the database on this node. */
  starting: number;
  /** The key's live sessions, as the database last answered, and when. */
  live?: number;
  at?: number;
  /** Sessions of this key this node has ended (or changes to the key). */
  ends: number;
  /** Creates waiting for one on its way to be answered (see `enter`). */
  waiting: (() => void)[];
}

/**
 * The fast refusal in front of the exact cap (the database's check-and-insert, one transaction
 * per create), in memory, per node and per key: a burst of creates against a key at its cap (a
 * retry storm) is answered from memory, while the creates that can succeed go through the
 * database, which stays the judge.
 *
 * A create is refused here, without a query, when the key's live sessions as the database last
 * counted them make its cap. When they do not, but with the creates of this node on their way to
 * the database they would, it waits for one of those to be answered (a few milliseconds: the
 * insert, not the media start) and looks again; otherwise it goes on to the database. So only
 * the database's own count ever refuses, and a create is never let in on a remembered count.
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

  constructor(
    private readonly trustedMs = LIVE_COUNT_TRUSTED_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Lets a create of `keyId` through to the database (hold the ticket until it answers), or
   * refuses it with the database's last count.
   */
  async enter(
    keyId: string,
    cap: number,
    secretHash?: string,
  ): Promise<{ ticket: CreateTicket } | { refused: Refusal }> {
    for (;;) {
      const s = this.stateOf(keyId, cap, secretHash);
      const live = this.trustedLive(s);
      if (live >= s.cap) {
        this.forgetIdle(keyId, s);
        return { refused: { active: live, cap: s.cap } };
      }
      if (live + s.starting < s.cap) {
        s.starting++;
        return { ticket: { keyId, ends: s.ends } };
      }
      await new Promise<void>((resolve) => s.waiting.push(resolve));
    }
  }

  /**
   * The refusal of a create that comes with this secret (its hash), when its key's last create
   * here came with it and the database's last count puts the key at its cap; else undefined (the
   * create goes the whole way: authenticated, then `enter`).
   */
  refusalFor(secretHash: string): (Refusal & { keyId: string }) | undefined {
    const keyId = this.bySecret.get(secretHash);
    const s = keyId === undefined ? undefined : this.keys.get(keyId);
    if (!s) return undefined;
    const live = this.trustedLive(s);
    return live >= s.cap ? { keyId: keyId!, active: live, cap: s.cap } : undefined;
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
    this.wake(s);
    this.forgetIdle(ticket.keyId, s);
  }

  /** This node ended a session of the key (its end is in the database): forget the count. */
  ended(keyId: string): void {
    const s = this.keys.get(keyId);
    if (!s) return;
    s.ends++;
    s.live = undefined;
    s.at = undefined;
    this.wake(s);
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

  /** Keys with a create on its way or a count known (for tests and diagnostics). */
  get size(): number {
    return this.keys.size;
  }

  private stateOf(keyId: string, cap: number, secretHash: string | undefined): KeyState {
    const s = this.keys.get(keyId) ?? { cap, starting: 0, ends: 0, waiting: [] };
    s.cap = cap;
    if (secretHash !== undefined && s.secretHash !== secretHash) {
      if (s.secretHash !== undefined) this.bySecret.delete(s.secretHash);
      s.secretHash = secretHash;
      this.bySecret.set(secretHash, keyId);
    }
    this.keys.set(keyId, s);
    return s;
  }

  private trustedLive(s: KeyState): number {
    if (s.live === undefined || s.at === undefined) return 0;
    return this.now() - s.at <= this.trustedMs || s.starting > 0 ? s.live : 0;
  }

  private wake(s: KeyState): void {
    for (const resolve of s.waiting.splice(0)) resolve();
  }

  private forgetIdle(keyId: string, s: KeyState): void {
    if (s.starting > 0 || s.live !== undefined || s.waiting.length > 0) return;
    this.keys.delete(keyId);
    if (s.secretHash !== undefined) this.bySecret.delete(s.secretHash);
  }
}
