import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  CreateAdmission,
  type CreateTicket,
} from '../../src/server/sessions/creation/createAdmission.js';

/** A clock the test moves. */
function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

async function admitted(a: CreateAdmission, key: string, cap: number, hash?: string) {
  const r = await a.enter(key, cap, hash);
  if (!('ticket' in r)) throw new Error(`refused: ${JSON.stringify(r.refused)}`);
  return r.ticket;
}

/** Whether `p` is still pending after the microtasks queued so far ran. */
async function pending(p: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([p, sleep(0, marker)])) === marker;
}

describe('CreateAdmission', () => {
  it("refuses from the database's last count, and only from it", async () => {
    const t = clock();
    const a = new CreateAdmission(1_000, t.now);
    const ticket = await admitted(a, 'k', 3);
    a.settle(ticket, 3);
    expect(await a.enter('k', 3)).toEqual({ refused: { active: 3, cap: 3 } });
    // A raised cap (authenticated with the request) lets the next one through.
    expect('ticket' in (await a.enter('k', 4))).toBe(true);
  });

  it('holds a create back while those on their way would make the cap, then judges again', async () => {
    const a = new CreateAdmission();
    const first = [await admitted(a, 'k', 2), await admitted(a, 'k', 2)];
    const third = a.enter('k', 2);
    expect(await pending(third)).toBe(true);
    a.settle(first[0]!, 1);
    expect(await pending(third)).toBe(true);
    // The other was refused by the database after all (the node was full): the third goes on.
    a.settle(first[1]!, 1);
    expect('ticket' in (await third)).toBe(true);
  });

  it('refuses the creates held back once those on their way made the cap', async () => {
    const a = new CreateAdmission();
    const ticket = await admitted(a, 'k', 1);
    const held = [a.enter('k', 1), a.enter('k', 1)];
    a.settle(ticket, 1);
    expect(await Promise.all(held)).toEqual([
      { refused: { active: 1, cap: 1 } },
      { refused: { active: 1, cap: 1 } },
    ]);
  });

  it('forgets the count when this node ends a session of the key', async () => {
    const a = new CreateAdmission();
    a.settle(await admitted(a, 'k', 1), 1);
    a.ended('k');
    expect('ticket' in (await a.enter('k', 1))).toBe(true);
  });

  it('drops a count read before an end that came after the create', async () => {
    const a = new CreateAdmission();
    a.settle(await admitted(a, 'k', 2), 1);
    const racing: CreateTicket = await admitted(a, 'k', 2);
    a.ended('k'); // committed after the racing create counted
    a.settle(racing, 2);
    expect('ticket' in (await a.enter('k', 2))).toBe(true);
  });

  it('trusts a count for a bounded time, longer only while a create refreshes it', async () => {
    const t = clock();
    const a = new CreateAdmission(1_000, t.now);
    a.settle(await admitted(a, 'k', 1), 1);
    t.advance(1_001);
    const refresh = await admitted(a, 'k', 1);
    // While that one asks the database, the old count still refuses.
    expect(await a.enter('k', 1)).toEqual({ refused: { active: 1, cap: 1 } });
    a.settle(refresh, 1);
    expect(await a.enter('k', 1)).toEqual({ refused: { active: 1, cap: 1 } });
  });

  it('refuses by secret before authentication only for a key at its cap', async () => {
    const t = clock();
    const a = new CreateAdmission(1_000, t.now);
    expect(a.refusalFor('hash-k')).toBeUndefined();
    const ticket = await admitted(a, 'k', 2, 'hash-k');
    expect(a.refusalFor('hash-k')).toBeUndefined();
    a.settle(ticket, 2);
    expect(a.refusalFor('hash-k')).toEqual({ keyId: 'k', active: 2, cap: 2 });
    expect(a.refusalFor('hash-other')).toBeUndefined();
    t.advance(1_001);
    expect(a.refusalFor('hash-k')).toBeUndefined();
  });

  it('forgets a key revoked or given a new cap, secret included', async () => {
    const a = new CreateAdmission();
    a.settle(await admitted(a, 'k', 1, 'hash-k'), 1);
    a.keyChanged('k');
    expect(a.refusalFor('hash-k')).toBeUndefined();
    expect(a.size).toBe(0);
  });

  it('keeps nothing for a key with no create on its way and no count', async () => {
    const a = new CreateAdmission();
    a.settle(await admitted(a, 'k', 1, 'hash-k'));
    expect(a.size).toBe(0);
    expect(a.refusalFor('hash-k')).toBeUndefined();
  });
});
