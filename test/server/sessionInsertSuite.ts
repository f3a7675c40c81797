// SPDX-License-Identifier: GPL-3.0-or-later
import { expect, it } from 'vitest';
import { ID_PREFIXES, newId } from '@visage-avatar/client/api';
import type { NewSession } from '../../src/server/store/sessions.js';
import type { Placement, Store } from '../../src/server/store/store.js';

/**
 * The create's check-and-insert (sessions.ts, insertSessionLocked) under parallel creates,
 * straight on the store: on the embedded PGlite (sessionInsert.test.ts), one statement per
 * create, and on a real PostgreSQL (sessionInsert.postgres.test.ts), a transaction per create on
 * several stores at once, as nodes are. The HTTP tests go through each node's admission
 * (createAdmission.ts), which lets only as many creates as fit reach the database; here every
 * create does.
 */
export interface InsertTarget {
  /** `count` stores on one database (the same store again where there is one connection). */
  stores(count: number): Promise<Store[]>;
}

const NODE = 'node_insert_suite';

function newSession(keyId: string, room = `room_${newId(ID_PREFIXES.session)}`): NewSession {
  const id = newId(ID_PREFIXES.session);
  return {
    id,
    keyId,
    avatarId: 'avt_suite',
    voiceId: 'voice_suite',
    mode: 'video',
    transport: 'livekit',
    livekitUrl: 'ws://livekit.invalid',
    roomName: room,
    agentIdentity: `avatar_${id}`,
    publishOnBehalf: null,
    callerLiveKit: false,
    idleTimeoutSeconds: 300,
    maxDurationSeconds: 3600,
  };
}

async function newKey(store: Store, cap: number): Promise<string> {
  const id = newId(ID_PREFIXES.key);
  await store.insertKey({ id, name: 'suite', secret: newId(ID_PREFIXES.secretKey), cap });
  return id;
}

const onNode = (capacity: number): Placement => ({ kind: 'node', nodeId: NODE, capacity });

/** `count` creates at once, spread over the stores, each a fresh session from `make`. */
function burst(stores: Store[], count: number, make: (i: number) => NewSession, at: Placement) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      stores[i % stores.length]!.insertSessionWithinCaps(make(i), at),
    ),
  );
}

export function sessionInsertCases(target: InsertTarget): void {
  it('saves the session as the create gave it', async () => {
    const [store] = await target.stores(1);
    const key = await newKey(store!, 3);
    const given = { ...newSession(key), callerLiveKit: true, publishOnBehalf: 'agent_1' };
    const r = await store!.insertSessionWithinCaps(given, onNode(100));
    if (!('session' in r)) throw new Error(`refused: ${r.refused}`);
    expect(r).toMatchObject({ active: 1, cap: 3 });
    const { session } = r;
    expect(session).toMatchObject({ ...given, nodeId: NODE, status: 'active', endedAt: null });
    expect(await store!.getSessionById(given.id)).toEqual(session);
  });

  it('keeps a key at its cap however many creates reach the database at once', async () => {
    const stores = await target.stores(3);
    const key = await newKey(stores[0]!, 3);
    const results = await burst(stores, 30, () => newSession(key), onNode(100));
    const created = results.filter((r) => 'session' in r);
    expect(created).toHaveLength(3);
    for (const r of created) expect(r).toMatchObject({ cap: 3, session: { status: 'active' } });
    expect(created.map((r) => r.active).sort()).toEqual([1, 2, 3]);
    const refused = results.filter((r) => 'refused' in r);
    expect(refused).toHaveLength(27);
    for (const r of refused) expect(r).toEqual({ refused: 'concurrency_cap', active: 3, cap: 3 });
    expect(await stores[0]!.countLiveForKey(key)).toBe(3);
  });

  it("keeps the node's capacity: the creates past it are platform_busy", async () => {
    const stores = await target.stores(3);
    const key = await newKey(stores[0]!, 50);
    // Other tests' sessions on the node count too: the capacity is what is live now, plus 2.
    const live = (await stores[0]!.liveSessionIdsOnNode(NODE)).size;
    const results = await burst(stores, 12, () => newSession(key), onNode(live + 2));
    expect(results.filter((r) => 'session' in r)).toHaveLength(2);
    const refused = results.filter((r) => 'refused' in r);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r).toMatchObject({ refused: 'platform_busy', cap: 50 });
  });

  it('gives a room to one key when two keys create into it at once, and to the other once it is free', async () => {
    const stores = await target.stores(3);
    const keys = [await newKey(stores[0]!, 20), await newKey(stores[0]!, 20)];
    const room = `room_${newId(ID_PREFIXES.session)}`;
    const results = await burst(stores, 12, (i) => newSession(keys[i % 2]!, room), onNode(100));
    const winners = new Set(results.flatMap((r) => ('session' in r ? [r.session.keyId] : [])));
    expect(winners.size).toBe(1);
    const winner = [...winners][0]!;
    const loser = keys.find((k) => k !== winner)!;
    expect(results.filter((r) => 'session' in r)).toHaveLength(6);
    for (const r of results.filter((r) => 'refused' in r)) {
      expect(r).toMatchObject({ refused: 'room_not_available', active: 0, cap: 20 });
    }
    // The room is the loser's once none of the winner's sessions in it is live.
    for (const r of results)
      if ('session' in r) await stores[0]!.endSession(r.session.id, 'deleted');
    const taken = await stores[1]!.insertSessionWithinCaps(newSession(loser, room), onNode(100));
    expect(taken).toMatchObject({ session: { keyId: loser, roomName: room }, active: 1 });
    const refused = await stores[2]!.insertSessionWithinCaps(newSession(winner, room), onNode(100));
    expect(refused).toMatchObject({ refused: 'room_not_available' });
  });
}
