// SPDX-License-Identifier: GPL-3.0-or-later
// `visage dev`'s playground as a developer uses it: `npx visage dev` (the build, whose page script
// is the bundle in dist/), an agents-js worker with a Visage avatar registered with its LiveKit
// server (examples/agent-worker/agent.ts --offline: the echo agent), and the page in headless
// Chromium with a fake microphone. Joining dispatches the worker; the avatar's video plays, its
// greeting appears as it says it, the agent's state shows, and a typed message is answered. Then
// a second page picks the face drawn in the browser (client mode): no video, the canvas shows the
// face and its mouth opens while the avatar answers.
import { afterEach, beforeAll, expect, inject, it } from 'vitest';
import { OFFLINE_GREETING } from '../../examples/agent-worker/echoLlm.js';
import { startAgentWorker } from '../plugin/agentWorkerProcess.js';
import { copyTemplate } from '../server/templateDatabase.js';
import { describeWebRtc } from '../support/network.js';
import {
  describeDrawnSpeech,
  drawnSpeechProblem,
  measureDrawnSpeech,
  mouthShut,
} from '../web/canvasProbe.js';
import { buildCli, startCli } from './cliProcess.js';
import {
  agentSays,
  openPlayground,
  playgroundOf,
  receivedVideo,
  videoFrames,
  videoPlaying,
  type Playground,
} from './playgroundBrowser.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describeWebRtc('the playground of `npx visage dev`, with an agent worker', () => {
  beforeAll(() => buildCli(), 180_000);

  it('shows the avatar, the greeting as it is said and the state, and answers typing', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const keys = { key: 'APIplayground', secret: 'playground-test-secret-0123456789abcdef' };
    const dev = startCli(
      [
        'dev',
        '--port',
        '0',
        '--livekit-port',
        '0',
        '--data-dir',
        dir,
        '--livekit-keys',
        `${keys.key}:${keys.secret}`,
      ],
      { built: true },
    );
    cleanups.push(async () => dev.child.kill('SIGKILL'));
    const out = await dev.waitFor(/Press Ctrl-C/, 180_000);
    const apiUrl = /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
    const livekitUrl = /LiveKit:\s+(ws:\/\/\S+)/.exec(out)![1]!;
    const secret = /sk_[0-9A-Za-z]{40}/.exec(out)![0];

    const worker = startAgentWorker(
      {
        LIVEKIT_URL: livekitUrl,
        LIVEKIT_API_KEY: keys.key,
        LIVEKIT_API_SECRET: keys.secret,
        VISAGE_API_KEY: secret,
        VISAGE_API_URL: apiUrl,
      },
      ['--offline'],
    );
    cleanups.push(() => worker.stop());
    await worker.registered();

    // The page holds no secret: neither the LiveKit secret nor the Visage key is anywhere in it.
    const playground = await openPlayground(apiUrl, [keys.secret, secret]);
    cleanups.push(() => playground.close());
    const { page, served } = playground;

    const failure = async (what: string) =>
      new Error(
        `${what}; the page said: ${await page.textContent('#status')}\n` +
          `lines: ${JSON.stringify((await playgroundOf(page)).lines)}\n` +
          `--- worker output ---\n${worker.output().slice(-4000)}\n` +
          `--- visage dev output ---\n${dev.output().slice(-3000)}\n` +
          `--- page console ---\n${playground.console().slice(-3000)}\n` +
          `--- received video ---\n${await receivedVideo(page)}`,
      );
    // The avatar's video plays: frames decode, and they are a picture.
    await videoPlaying(page, 25, 90_000).catch(async () => {
      throw await failure('the avatar video did not play');
    });
    const first = await videoFrames(page);
    expect(first.width).toBe(512);
    expect(first.distinct).toBeGreaterThan(20);

    // The greeting appears as the avatar says it, then whole.
    const seen = await agentSays(page, OFFLINE_GREETING, 90_000, (s) =>
      failure(`no whole greeting; saw ${s.join(' | ')}`),
    );
    expect(seen.some((t) => t.length > 0 && t.length < OFFLINE_GREETING.length)).toBe(true);
    await expect
      .poll(() => page.textContent('#transcript'), { timeout: 10_000 })
      .toContain('Type something and I will say it back.');

    // The agent's state, from its lk.agent.state attribute, on the page.
    await expect
      .poll(async () => (await playgroundOf(page)).states.at(-1), { timeout: 30_000 })
      .toBe('listening');
    expect(await page.textContent('#state')).toBe('listening');

    // The microphone: the page publishes it (the fake device).
    await page.click('#mic');
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('#mic')!.dataset.on === 'true',
      undefined,
      { timeout: 30_000 },
    );
    // Typing: the echo agent answers, and the avatar says it.
    const framesBefore = (await videoFrames(page)).decoded;
    await page.fill('#text', 'Nice to meet you');
    await page.press('#text', 'Enter');
    await page
      .waitForFunction(
        () =>
          (window as unknown as { playground: Playground }).playground.lines.some(
            (l) => l.who === 'Agent' && l.done && l.text.trim() === 'You said: Nice to meet you',
          ),
        undefined,
        { timeout: 90_000 },
      )
      .catch(async () => {
        throw await failure('no answer to the typed message');
      });
    const { lines, states } = await playgroundOf(page);
    expect(lines.map((l) => `${l.who}: ${l.text.trim()}`).slice(-2)).toEqual([
      'You: Nice to meet you',
      'Agent: You said: Nice to meet you',
    ]);
    expect(states).toContain('speaking');
    // The video went on playing (a frozen avatar is what a viewer would see first).
    await videoPlaying(page, framesBefore + 1, 30_000).catch(async () => {
      throw await failure(`the video stopped at ${framesBefore} frames`);
    });
    expect(await page.locator('audio').count()).toBeGreaterThanOrEqual(1);
    expect(served.filter((s) => s.startsWith('SECRET'))).toEqual([]);
    expect(served).toContain(`${apiUrl}/playground/token`);

    // The other face: drawn in the browser. The page asks the agent for it (the token's dispatch
    // metadata, which the plugin takes: the example worker sets no `face`): no video, the canvas shows
    // the face and its mouth opens while the avatar answers.
    const drawn = await playground.browser.newPage();
    await drawn.goto(`${apiUrl}/playground`);
    await drawn.selectOption('#face', 'client');
    await drawn.click('#start');
    const drawnFailure = async (what: string) =>
      new Error(
        `${what}; the page said: ${await drawn.textContent('#status')}\n` +
          `--- worker output ---\n${worker.output().slice(-4000)}`,
      );
    await drawn
      .waitForFunction(
        () =>
          (window as unknown as { playground: { avatar?: { drawn?: unknown } } }).playground.avatar
            ?.drawn !== undefined,
        undefined,
        { timeout: 90_000 },
      )
      .catch(async () => {
        throw await drawnFailure('no face drawn on the canvas');
      });
    // The greeting said first: the probe measures the answer, from an idle face.
    await expect
      .poll(async () => (await playgroundOf(drawn)).lines.some((l) => l.done), { timeout: 90_000 })
      .toBe(true);
    await expect
      .poll(async () => (await playgroundOf(drawn)).states.at(-1), { timeout: 30_000 })
      .toBe('listening');
    const region = await drawn.evaluate(
      () =>
        (
          window as unknown as {
            playground: { avatar: { atlas: { mouthRegion: DOMRectInit } } };
          }
        ).playground.avatar.atlas.mouthRegion,
    );
    const speech = await measureDrawnSpeech(drawn, '#drawn', region, async () => {
      await drawn.fill('#text', 'Maybe my mother bought a big blue map by Monday');
      await drawn.press('#text', 'Enter');
    }).catch(async (err: unknown) => {
      throw await drawnFailure(`no speech measured: ${String(err)}`);
    });
    console.log(`playground, drawn in the browser: ${describeDrawnSpeech(speech)}`);
    expect(drawnSpeechProblem(speech), describeDrawnSpeech(speech)).toBeUndefined();
    await mouthShut(drawn, speech.closed);
    const tracks = await drawn.evaluate(() => {
      const { room } = (
        window as unknown as { playground: { room: import('livekit-client').Room } }
      ).playground;
      return [...room.remoteParticipants.values()].flatMap((p) =>
        [...p.trackPublications.values()].map((t) => t.kind),
      );
    });
    expect(tracks).toEqual(['audio']);
    expect(await drawn.$eval('#avatar', (v) => (v as HTMLVideoElement).srcObject)).toBeNull();
    expect(await drawn.isVisible('#drawn')).toBe(true);

    dev.child.kill('SIGTERM');
    expect((await dev.done).code).toBe(0);
  }, 700_000);
});
