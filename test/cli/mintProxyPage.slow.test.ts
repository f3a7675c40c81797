// SPDX-License-Identifier: GPL-3.0-or-later
// The mint-proxy page's photo picker as its README starts it: `npx visage dev` (the build), then
// `npx tsx examples/mint-proxy/proxy.ts` with the printed key, then a browser (headless Chromium)
// that picks a portrait and presses Start. The avatar's video plays and the session runs the photo.
// Then a second page picks the face drawn in the browser (client mode): no video, the canvas
// shows the face and its mouth opens while the voice plays.
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import { afterEach, beforeAll, expect, inject, it } from 'vitest';
import { findStockVoice } from '../../src/media/avatarCatalogue.js';
import { launchChromium } from '../support/chromium.js';
import { copyTemplate } from '../server/templateDatabase.js';
import { describeWebRtc } from '../support/network.js';
import { ASTRONAUT_PATH } from '../support/portraits.js';
import {
  describeDrawnSpeech,
  drawnSpeechProblem,
  measureDrawnSpeech,
  mouthShut,
} from '../web/canvasProbe.js';
import { buildCli, startCli } from './cliProcess.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** The proxy as a process, as its README runs it; answers the URL it printed. */
async function startProxy(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/mint-proxy/proxy.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(async () => child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const until = Date.now() + 60_000;
  for (;;) {
    const url = /mint proxy on (http:\/\/\S+)/.exec(output)?.[1];
    if (url) return url;
    if (Date.now() > until || child.exitCode !== null) {
      throw new Error(`the mint proxy did not start: ${output}`);
    }
    await sleep(50);
  }
}

describeWebRtc('the mint-proxy page against `npx visage dev`', (address) => {
  beforeAll(() => buildCli(), 180_000);

  it('picks a portrait, starts, and shows the photo avatar speaking in the browser', async () => {
    const dir = copyTemplate(inject('dbTemplate'));
    const dev = startCli(['dev', '--port', '0', '--livekit-port', '0', '--data-dir', dir], {
      built: true,
    });
    cleanups.push(async () => dev.child.kill('SIGKILL'));
    const out = await dev.waitFor(/Press Ctrl-C/, 180_000);
    const apiUrl = /API:\s+(http:\/\/\S+)/.exec(out)![1]!;
    const secret = /sk_[0-9A-Za-z]{40}/.exec(out)![0];
    const proxyUrl = await startProxy({
      VISAGE_API_KEY: secret,
      VISAGE_API_URL: apiUrl,
      HOST: address,
      PORT: '0',
    });
    const browser = await launchChromium({ secureOrigin: proxyUrl });
    cleanups.push(() => browser.close());
    const page = await browser.newPage();
    await page.goto(proxyUrl);
    await page.setInputFiles('#photo', ASTRONAUT_PATH);
    await page.click('#start');
    await page
      .waitForFunction(
        () => {
          const v = document.querySelector('video')!;
          return v.readyState >= 2 && v.videoWidth === 512 && v.currentTime > 1;
        },
        undefined,
        { timeout: 120_000 },
      )
      .catch(async (err: unknown) => {
        throw new Error(`${String(err)}; the page said: ${await page.textContent('#status')}`);
      });
    // The session the page runs is a photo avatar's.
    const auth = { authorization: `Bearer ${secret}` };
    const live = (await (
      await fetch(`${apiUrl}/v1/sessions?status=active`, { headers: auth })
    ).json()) as { data: { avatar_id: string; voice_id: string }[] };
    expect(live.data).toHaveLength(1);
    const avatar = (await (
      await fetch(`${apiUrl}/v1/avatars/${live.data[0]!.avatar_id}`, { headers: auth })
    ).json()) as { source: string; default_voice_id: string };
    expect(avatar.source).toBe('photo');
    // No voice picked on the page (its first choice, the avatar's own): the session speaks with
    // the photo avatar's default, the stock voice that fits the face (Eileen Collins: a woman's).
    expect(await page.$eval('#voice', (s) => (s as HTMLSelectElement).value)).toBe('');
    expect(live.data[0]!.voice_id).toBe(avatar.default_voice_id);
    expect(findStockVoice(avatar.default_voice_id)?.speaker).toBe('female');
    // It speaks what is typed: the transcript shows it.
    await page.fill('#text', 'A photo that talks.');
    await page.press('#text', 'Enter');
    await page.waitForFunction(
      () => document.querySelector('#transcript')!.textContent!.includes('A photo that talks.'),
      undefined,
      { timeout: 60_000 },
    );

    // The other face: drawn in the browser (client mode), a stock avatar. No video at all; the
    // canvas shows the face, its mouth open while the voice plays.
    const drawn = await browser.newPage();
    await drawn.goto(proxyUrl);
    await drawn.selectOption('#mode', 'client');
    await drawn.click('#start');
    await drawn
      .waitForFunction(
        () =>
          (window as unknown as { visageAvatar?: { drawn?: unknown } }).visageAvatar?.drawn !==
          undefined,
        undefined,
        { timeout: 60_000 },
      )
      .catch(async (err: unknown) => {
        throw new Error(`${String(err)}; the page said: ${await drawn.textContent('#status')}`);
      });
    const region = await drawn.evaluate(
      () =>
        (window as unknown as { visageAvatar: { atlas: { mouthRegion: DOMRectInit } } })
          .visageAvatar.atlas.mouthRegion,
    );
    const speech = await measureDrawnSpeech(drawn, '#drawn', region, async () => {
      await drawn.fill('#text', 'Maybe my mother bought a big blue map by Monday.');
      await drawn.press('#text', 'Enter');
    });
    console.log(`mint-proxy page, drawn in the browser: ${describeDrawnSpeech(speech)}`);
    expect(drawnSpeechProblem(speech), describeDrawnSpeech(speech)).toBeUndefined();
    await mouthShut(drawn, speech.closed);
    const tracks = await drawn.evaluate(() => {
      const room = (window as unknown as { visageRoom: import('livekit-client').Room }).visageRoom;
      return [...room.remoteParticipants.values()].flatMap((p) =>
        [...p.trackPublications.values()].map((t) => t.kind),
      );
    });
    expect(tracks).toEqual(['audio']);
    expect(await drawn.$eval('#avatar', (v) => (v as HTMLVideoElement).srcObject)).toBeNull();
    expect(await drawn.isVisible('#drawn')).toBe(true);
    const modes = (await (
      await fetch(`${apiUrl}/v1/sessions?status=active`, { headers: auth })
    ).json()) as { data: { mode: string }[] };
    expect(modes.data.map((d) => d.mode).sort()).toEqual(['client', 'video']);

    dev.child.kill('SIGTERM');
    expect((await dev.done).code).toBe(0);
  }, 500_000);
});
