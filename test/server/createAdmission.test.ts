// SPDX-License-Identifier: GPL-3.0-or-later
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

function admitted(a: CreateAdmission, key: string, cap: number, hash?: string) {
  const r = a.enter(key, cap, hash);
  if (!('ticket' in r)) throw new Error(`refused: ${JSON.stringify(r.refused)}`);
  return r.ticket;
}

describe('CreateAdmission', () => {
  it("refuses from the database's last count, and only from it", () => {
    const t = clock();
    const a = new CreateAdmission(1_000, t.now);
    const ticket = admitted(a, 'k', 3);
    a.settle(ticket, 3);
    expect(a.enter('k', 3)).toEqual({ refused: { active: 3, cap: 3, starting: 0 } });
    // A raised cap (authenticated with the request) lets the next one through.
    expect('ticket' in a.enter('k', 4)).toBe(true);
  });

  it('counts the creates still starting against the cap, and refuses at once past it', () => {
    const a = new CreateAdmission();
    const first = [admitted(a, 'k', 2), admitted(a, 'k', 2)];
    // Nothing counted by the database yet: the two starting make the cap.
    expect(a.enter('k', 2)).toEqual({ refused: { active: 2, cap: 2, starting: 2 } });
    a.settle(first[0]!, 1);
    expect(a.enter('k', 2)).toEqual({ refused: { active: 2, cap: 2, starting: 1 } });
    // The other failed before it was counted (the node was full): its slot is free again.
    a.settle(first[1]!);
    expect('ticket' in a.enter('k', 2)).toBe(true);
  });

  it('refuses by secret, before authentication, while the creates starting make the cap', () => {
    const a = new CreateAdmission();
    const ticket = admitted(a, 'k', 1, 'hash-k');
    expect(a.refusalFor('hash-k')).toEqual({ keyId: 'k', active: 1, cap: 1, starting: 1 });
    a.settle(ticket);
    expect(a.refusalFor('hash-k')).toBeUndefined();
  });

  it('forgets the count when this node ends a session of the key', () => {
    const a = new CreateAdmission();
    a.settle(admitted(a, 'k', 1), 1);
    a.ended('k');
    expect('ticket' in a.enter('k', 1)).toBe(true);
  });

  it('drops a count read before an end that came after the create', () => {
    const a = new CreateAdmission();
    a.settle(admitted(a, 'k', 2), 1);
    const racing: CreateTicket = admitted(a, 'k', 2);
    a.ended('k'); // committed after the racing create counted
    a.settle(racing, 2);
    expect('ticket' in a.enter('k', 2)).toBe(true);
  });

  it('trusts a count for a bounded time, longer only while a create refreshes it', () => {
    const t = clock();
    const a = new CreateAdmission(1_000, t.now);
    a.settle(admitted(a, 'k', 1), 1);
    t.advance(1_001);
    const refresh = admitted(a, 'k', 1);
    // While that one asks the database, the old count still refuses.
    expect(a.enter('k', 1)).toEqual({ refused: { active: 1, cap: 1, starting: 0 } });
    a.settle(refresh, 1);
    expect(a.enter('k', 1)).toEqual({ refused: { active: 1, cap: 1, starting: 0 } });
  });

  it('refuses by secret before authentication only for a key at its cap', () => {
    const t = clock();
    const a = new CreateAdmission(1_000, t.now);
    expect(a.refusalFor('hash-k')).toBeUndefined();
    const ticket = admitted(a, 'k', 2, 'hash-k');
    expect(a.refusalFor('hash-k')).toBeUndefined();
    a.settle(ticket, 2);
    expect(a.refusalFor('hash-k')).toEqual({ keyId: 'k', active: 2, cap: 2, starting: 0 });
    expect(a.refusalFor('hash-other')).toBeUndefined();
    t.advance(1_001);
    expect(a.refusalFor('hash-k')).toBeUndefined();
  });

  it('forgets a key revoked or given a new cap, secret included', () => {
    const a = new CreateAdmission();
    a.settle(admitted(a, 'k', 1, 'hash-k'), 1);
    a.keyChanged('k');
    expect(a.refusalFor('hash-k')).toBeUndefined();
    expect(a.size).toBe(0);
  });

  it('keeps nothing for a key with no create on its way and no count', () => {
    const a = new CreateAdmission();
    a.settle(admitted(a, 'k', 1, 'hash-k'));
    expect(a.size).toBe(0);
    expect(a.refusalFor('hash-k')).toBeUndefined();
  });
});
