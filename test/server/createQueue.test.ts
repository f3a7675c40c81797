// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it, vi } from 'vitest';
import { CreateQueue, type QueuedCreate } from '../../src/server/http/createQueue.js';
import { CreateAdmission } from '../../src/server/sessions/creation/createAdmission.js';
import { CapacityRefusedError } from '../../src/server/sessions/sessionErrors.js';

/**
 * The listener holds creates of one secret while as many as could be let through are judged by
 * the app (src/server/http/createQueue.ts), on a real admission: the app's part is played here by
 * calling `enter` as the route would, and closing the answer.
 */

function queueOn(admission: CreateAdmission, holdLimitMs?: number) {
  return new CreateQueue(
    {
      refusalFromMemory: (hash, passedOn) => {
        const r = admission.refusalFor(hash, passedOn);
        return r && new CapacityRefusedError('concurrency_cap', r.active, r.cap, r.starting);
      },
      knowsCreateSecret: (hash) => admission.knows(hash),
      watchCreateJudgements: (hash, judged) => admission.watchJudgements(hash, judged),
    },
    holdLimitMs,
  );
}

/** A create whose fate the test reads: held, refused (with its message), or passed on. */
function create() {
  const c = {
    fate: 'held' as 'held' | 'passed' | 'refused',
    message: '',
    close: () => undefined as void,
    queued: {
      refuse: (error) => {
        c.fate = 'refused';
        c.message = error.message;
      },
      pass: (closed) => {
        c.fate = 'passed';
        c.close = closed;
      },
    } satisfies QueuedCreate,
  };
  return c;
}

const settled = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe('CreateQueue', () => {
  it('passes one create of an unknown secret on, then as many as its key has room for, and refuses the rest at once', async () => {
    const admission = new CreateAdmission();
    const queue = queueOn(admission);
    const creates = Array.from({ length: 6 }, create);
    for (const c of creates) queue.route('hash-k', c.queued);
    expect(creates.map((c) => c.fate)).toEqual(['passed', ...Array(5).fill('held')]);

    // The app judges the first (cap 3): two more go on, and hold the last slots on their way.
    const first = admission.enter('k', 3, 'hash-k');
    expect('ticket' in first).toBe(true);
    await settled();
    expect(creates.map((c) => c.fate)).toEqual([
      'passed',
      'passed',
      'passed',
      'refused',
      'refused',
      'refused',
    ]);
    expect(creates[5]!.message).toMatch(/3 of them being created now/);
    // A later one is refused at once, as long as those two are on their way or starting.
    const late = create();
    queue.route('hash-k', late.queued);
    expect(late.fate).toBe('refused');
    admission.enter('k', 3, 'hash-k');
    admission.enter('k', 3, 'hash-k');
    await settled();
    const later = create();
    queue.route('hash-k', later.queued);
    expect(later.fate).toBe('refused');
    for (const c of creates.slice(0, 3)) c.close();
    expect(queue.size).toBe(0);
  });

  it('passes every create held on to the app when the one before answers without a judgement', () => {
    const queue = queueOn(new CreateAdmission());
    const creates = Array.from({ length: 4 }, create);
    for (const c of creates) queue.route('hash-bad', c.queued);
    expect(creates.map((c) => c.fate)).toEqual(['passed', 'held', 'held', 'held']);
    // A bad secret, a bad body, the database away: the app answers them all itself.
    creates[0]!.close();
    expect(creates.map((c) => c.fate)).toEqual(['passed', 'passed', 'passed', 'passed']);
    for (const c of creates.slice(1)) c.close();
    expect(queue.size).toBe(0);
  });

  it('passes the creates held on when the one before them is slow to be judged', async () => {
    const queue = queueOn(new CreateAdmission(), 50);
    const creates = Array.from({ length: 3 }, create);
    for (const c of creates) queue.route('hash-slow', c.queued);
    expect(creates.map((c) => c.fate)).toEqual(['passed', 'held', 'held']);
    // Its body still on its way on a slow link: the others do not wait for it past the limit.
    await vi.waitFor(() => expect(creates.map((c) => c.fate)).toEqual(Array(3).fill('passed')), {
      timeout: 10_000,
    });
    for (const c of creates) c.close();
    expect(queue.size).toBe(0);
  });

  it('passes the next create on once a slot is free again', async () => {
    const admission = new CreateAdmission();
    const queue = queueOn(admission);
    const creates = Array.from({ length: 3 }, create);
    for (const c of creates) queue.route('hash-k', c.queued);
    const ticket = admission.enter('k', 1, 'hash-k');
    await settled();
    expect(creates.map((c) => c.fate)).toEqual(['passed', 'refused', 'refused']);
    // The create failed (its slot is free again), and a new one comes while it answers.
    if (!('ticket' in ticket)) throw new Error('refused');
    admission.settle(ticket.ticket);
    const next = create();
    queue.route('hash-k', next.queued);
    expect(next.fate).toBe('passed');
  });
});
