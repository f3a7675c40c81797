// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, until } from './agentHarness.js';
import { apiSession, startPluginHarness, type PluginHarness } from './pluginHarness.js';

let h: PluginHarness;
beforeAll(async () => {
  h = await startPluginHarness();
});
afterAll(() => h?.close());

const waitingCalls = (log: Array<{ event: string; waiting?: boolean }>) =>
  log.filter((e) => e.event === 'waiting').map((e) => e.waiting);

describe('idle controller', () => {
  it('parks the avatar after the quiet period and resumes it when the user speaks', async () => {
    const s = await h.start({ withVad: true, avatar: { parkAfterSeconds: 0.4 } });
    await until(() => s.sim.waiting, 3_000, 'the avatar to be parked');
    expect((await apiSession(h.server, s.sessionId)).status).toBe('waiting');
    s.vad!.startOfSpeech();
    await until(() => !s.sim.waiting, 3_000, 'the avatar to resume');
    expect((await apiSession(h.server, s.sessionId)).status).toBe('active');
    // While the user keeps talking the avatar is not parked again.
    await sleep(700);
    expect(waitingCalls(s.sim.log)).toEqual([true, false]);
    s.vad!.endOfSpeech(1_200);
    await until(() => s.sim.waiting, 3_000, 'parked again after the user stopped');
  });

  it('resumes before the next speech: waiting false reaches the avatar before /speak', async () => {
    const s = await h.start({
      responses: [{ input: 'hi', content: 'Back again. Ready when you are.' }],
      avatar: { parkAfterSeconds: 0.3 },
    });
    await until(() => s.sim.waiting, 3_000, 'parked');
    await s.session.run({ userInput: 'hi' }).wait();
    const events = s.sim.log
      .filter((e) => e.event === 'waiting' || e.event === 'speak')
      .map((e) => (e.event === 'waiting' ? `waiting:${e.waiting}` : `speak:${e.text}`));
    expect(events.slice(0, 4)).toEqual([
      'waiting:true',
      'waiting:false',
      'speak:Back again.',
      'speak:Ready when you are.',
    ]);
    expect(s.sim.finals()).toEqual(['Back again.', 'Ready when you are.']);
  });

  it('say() on a parked avatar resumes it first', async () => {
    const s = await h.start({ avatar: { parkAfterSeconds: 0.3 } });
    await until(() => s.sim.waiting, 3_000, 'parked');
    await s.session.say('Still here.').waitForPlayout();
    expect(s.sim.finals()).toEqual(['Still here.']);
    expect(waitingCalls(s.sim.log).slice(0, 2)).toEqual([true, false]);
  });

  it('never parks while the avatar is speaking', async () => {
    const long = Array.from({ length: 6 }, (_, i) => `This is sentence number ${i + 1}.`).join(' ');
    const s = await h.start({
      responses: [{ input: 'talk', content: long }],
      avatar: { parkAfterSeconds: 0.2 },
    });
    await until(() => s.sim.waiting, 3_000, 'parked');
    const handle = s.session.generateReply({ userInput: 'talk' });
    await handle.waitForPlayout();
    expect(handle.interrupted).toBe(false);
    expect(s.sim.finals()).toHaveLength(6);
    // One resume before speaking, no park until the speech was over.
    const lastFinal = s.sim.log.filter((e) => e.event === 'final').at(-1)!.at;
    const parks = s.sim.log.filter((e) => e.event === 'waiting' && e.waiting);
    expect(parks.filter((p) => p.at > parks[0]!.at && p.at < lastFinal)).toEqual([]);
  });
});
