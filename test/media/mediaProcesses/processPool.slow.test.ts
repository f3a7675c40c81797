// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { ProcessPoolMediaCore } from '../../../src/media/mediaProcesses/index.js';
import { describeWebRtc } from '../../support/network.js';
import { astronaut, multipartImage } from '../../support/portraits.js';
import { rms } from '../room/avatarClient.js';
import { startMediaStack, type JoinedSession, type MediaStack } from '../room/mediaStack.js';

const AVATAR = AVATAR_CATALOGUE[0]!.avatarId;
const LONG =
  'This is a long sentence that keeps the avatar talking for a while, so that there is something to interrupt, and then some more words after that.';

describeWebRtc('media in media processes (one event loop per core)', (address) => {
  let stack: MediaStack;
  let pool: ProcessPoolMediaCore;

  beforeAll(async () => {
    stack = await startMediaStack(address, { processes: 2 });
    pool = stack.media as ProcessPoolMediaCore;
  }, 120_000);
  afterAll(() => stack?.close());

  const call = (method: string, path: string, json?: unknown) =>
    stack.visage.call(method, path, json === undefined ? {} : { json });
  const session = async (id: string) =>
    (await (await call('GET', `/v1/sessions/${id}`)).json()) as {
      status: string;
      end_reason: string | null;
    };
  /** Speaks and waits until the subscriber hears speech after the call. */
  const speakAndHear = async (s: JoinedSession, text: string) => {
    const sent = s.client.now();
    const res = await call('POST', `/v1/sessions/${s.session_id}/speak`, { text });
    expect(res.status).toBe(202);
    await s.client.waitFor(
      () => rms(s.client.audioBetween(sent, s.client.now())) > 300,
      20_000,
      'speech at the subscriber',
    );
  };

  it('spreads sessions over the processes; each speaks, is interrupted and parks from the API process', async () => {
    expect(pool.pids).toHaveLength(2);
    const a = await stack.session(AVATAR);
    const b = await stack.session(AVATAR);
    expect(pool.pidOf(a.session_id)).not.toBe(pool.pidOf(b.session_id));
    expect(pool.pids).not.toContain(process.pid);

    await speakAndHear(a, LONG);
    const interrupted = await call('POST', `/v1/sessions/${a.session_id}/interrupt`);
    expect(await interrupted.json()).toMatchObject({ interrupted: true, dropped_utterances: 0 });
    // What was cut is reported on lk.chat as a final with only the heard part.
    await a.client.waitFor(() => a.client.finals().length > 0, 10_000, 'final after interrupt');
    expect(a.client.finals()[0]!.text.length).toBeLessThan(LONG.length);

    await speakAndHear(b, 'Hello from the other media process.');
    const parked = await call('POST', `/v1/sessions/${b.session_id}/waiting_state`, {
      waiting: true,
    });
    expect(await parked.json()).toMatchObject({ status: 'waiting' });
    // Parked avatars drop to a few frames a second.
    const from = b.client.now();
    await sleep(2_000);
    expect(b.client.framesMadeBetween(from + 500, b.client.now()).length / 1.5).toBeLessThan(12);
    for (const s of [a, b]) await call('DELETE', `/v1/sessions/${s.session_id}`);
  }, 120_000);

  it("runs a photo avatar's session in a media process, its build read from the API process's files", async () => {
    const made = await stack.visage.call('POST', '/v1/avatars', {
      body: multipartImage(astronaut(), { name: 'Worker face' }),
    });
    expect(made.status).toBe(201);
    const { avatar_id } = (await made.json()) as { avatar_id: string };
    const s = await stack.session(avatar_id);
    expect(pool.pids).toContain(pool.pidOf(s.session_id));
    await speakAndHear(s, 'Hello from a photo, in a media process.');
    const from = s.client.now();
    await s.client.waitFor(() => s.client.framesBetween(from, s.client.now()).length > 10, 10_000);
    await call('DELETE', `/v1/sessions/${s.session_id}`);
  }, 120_000);

  it("what a media process prints reaches the API process's log as records, not raw text", async () => {
    // SIGUSR1 makes Node open its inspector and print where to stderr: a line from the process
    // that its logger did not write, as a crash's last words or a codec's notice would be.
    const [pid] = pool.pids;
    process.kill(pid!, 'SIGUSR1');
    await expect
      .poll(
        () =>
          stack.logs.find(
            (l) => typeof l.stderr === 'string' && /inspector|Debugger/i.test(l.stderr),
          ),
        { timeout: 10_000, interval: 100 },
      )
      .toMatchObject({ level: 40, media_process: expect.any(Number), msg: 'media process output' });
  });

  it('a media process killed with SIGKILL ends its sessions (error, logged) and takes its avatars out of their rooms; the other media process and the API keep serving', async () => {
    // In the caller's room the dead avatar is removed; a room Visage made is deleted, as at a
    // normal end. Four sessions, two a process: the one sharing one with `doomed` is the other.
    const doomed = await stack.session(AVATAR, { room_name: `pool-crash-${Date.now()}` });
    const others = [
      await stack.session(AVATAR),
      await stack.session(AVATAR),
      await stack.session(AVATAR),
    ];
    const doomedPid = pool.pidOf(doomed.session_id)!;
    const owned = others.find((s) => pool.pidOf(s.session_id) === doomedPid)!;
    const survivor = others.find((s) => pool.pidOf(s.session_id) !== doomedPid)!;
    expect(owned).toBeDefined();
    expect(survivor).toBeDefined();

    const killedAt = performance.now();
    process.kill(doomedPid, 'SIGKILL');
    for (const s of [doomed, owned]) {
      await expect
        .poll(() => session(s.session_id), { timeout: 15_000, interval: 200 })
        .toMatchObject({ status: 'ended', end_reason: 'error' });
    }
    const exitLine = stack.logs.find((l) => String(l.msg).includes('media process exited'));
    expect(exitLine?.sessions).toEqual(
      expect.arrayContaining([doomed.session_id, owned.session_id]),
    );
    // The API process took the avatars out: the embedded server alone would have kept them,
    // frozen, for 15 s after the kill (its signal-loss grace).
    const removal = (s: JoinedSession) =>
      stack.logs.find((l) => l.session_id === s.session_id && typeof l.removal === 'string')
        ?.removal;
    await expect.poll(() => removal(doomed), { timeout: 10_000 }).toBe('participant_removed');
    await expect.poll(() => removal(owned), { timeout: 10_000 }).toBe('room_deleted');
    await doomed.client.waitFor(
      () => doomed.client.left.includes(doomed.agent_identity),
      10_000,
      'the dead avatar leaving the room',
    );
    const rooms = new RoomServiceClient(stack.livekit.url, stack.apiKey, stack.apiSecret);
    expect(await rooms.listRooms([owned.room_name])).toEqual([]);
    console.log(
      `avatars out of their rooms ${Math.round(performance.now() - killedAt)} ms after the kill`,
    );
    await call(
      'DELETE',
      `/v1/sessions/${others.find((s) => s !== owned && s !== survivor)!.session_id}`,
    );

    expect(await session(survivor.session_id)).toMatchObject({ status: 'active' });
    await speakAndHear(survivor, 'I am still here.');

    // The pool starts the process again, and new sessions run on it.
    await expect.poll(() => pool.pids.length, { timeout: 60_000, interval: 250 }).toBe(2);
    expect(pool.pids).not.toContain(doomedPid);
    const fresh = await stack.session(AVATAR);
    expect(pool.pidOf(fresh.session_id)).not.toBe(pool.pidOf(survivor.session_id));
    await speakAndHear(fresh, 'A new media process, a new session.');
    for (const s of [survivor, fresh]) await call('DELETE', `/v1/sessions/${s.session_id}`);
  }, 180_000);
});

describeWebRtc('media processes replaced after their share of sessions', (address) => {
  let stack: MediaStack;
  let pool: ProcessPoolMediaCore;

  beforeAll(async () => {
    stack = await startMediaStack(address, { processes: 1, maxSessionsPerProcess: 2 });
    pool = stack.media as ProcessPoolMediaCore;
  }, 120_000);
  afterAll(() => stack?.close());

  const call = (method: string, path: string) => stack.visage.call(method, path);
  const status = async (id: string) =>
    ((await (await call('GET', `/v1/sessions/${id}`)).json()) as { status: string }).status;

  it('a fresh process takes new sessions; the old one finishes its own, then exits', async () => {
    const [first] = pool.pids;
    const a = await stack.session(AVATAR);
    const b = await stack.session(AVATAR);
    expect(pool.pidOf(b.session_id)).toBe(first);
    // The second session was the first process's share: a replacement starts.
    await expect.poll(() => pool.pids[0], { timeout: 60_000, interval: 250 }).not.toBe(first);
    const fresh = pool.pids[0]!;
    const c = await stack.session(AVATAR);
    expect(pool.pidOf(c.session_id)).toBe(fresh);

    // The old process still runs the sessions it had: they keep their video and their state.
    const from = a.client.now();
    await a.client.waitFor(
      () => a.client.framesBetween(from, a.client.now()).length > 10,
      15_000,
      'frames from the replaced media process',
    );
    expect(isRunning(first!)).toBe(true);
    expect(await status(a.session_id)).toBe('active');

    // Once its last session is closed it exits, without an error and without ending others.
    await call('DELETE', `/v1/sessions/${a.session_id}`);
    expect(isRunning(first!)).toBe(true);
    await call('DELETE', `/v1/sessions/${b.session_id}`);
    await expect.poll(() => isRunning(first!), { timeout: 15_000, interval: 200 }).toBe(false);
    expect(stack.logs.some((l) => l.msg === 'replaced media process exited')).toBe(true);
    expect(stack.logs.some((l) => String(l.msg).startsWith('media process exited'))).toBe(false);
    expect(await status(c.session_id)).toBe('active');
    // One process, not the old one. (It is `fresh` unless a create had to be retried: a failed
    // start counts toward a process's share too, so `fresh` may have been replaced in turn.)
    expect(pool.pids).toHaveLength(1);
    expect(pool.pids).not.toContain(first);
    await call('DELETE', `/v1/sessions/${c.session_id}`);
  }, 180_000);
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
