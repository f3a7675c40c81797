// SPDX-License-Identifier: GPL-3.0-or-later
// The mint-proxy example in a real browser: headless Chromium opens the page the proxy serves,
// which gets a session through the proxy, shows the avatar's video, plays its audio, shows the
// lk.chat transcript and makes the avatar say what is typed. Everything runs inside the test
// network namespace: the embedded LiveKit server, Visage with the real media core, the proxy.
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMintProxy } from '../../examples/mint-proxy/proxy.js';
import { startMediaStack, type MediaStack } from '../media/room/mediaStack.js';
import type { TestServer } from '../server/testServer.js';
import { describeWebRtc } from '../support/network.js';
import { ASTRONAUT_PATH } from '../support/portraits.js';
import { AVATAR_CATALOGUE } from '../../src/media/avatarCatalogue.js';
import { photoThreadPool } from '../../src/media/photo/index.js';
import { launchChromium } from '../support/chromium.js';

describeWebRtc('examples/mint-proxy in headless Chromium', (address) => {
  let stack: MediaStack;
  let visage: TestServer;
  let proxy: Awaited<ReturnType<typeof startMintProxy>>;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startMediaStack(address);
    ({ visage } = stack);
    proxy = await startMintProxy({
      apiKey: visage.secret,
      apiUrl: visage.url,
      host: address,
      port: 0,
    });
    browser = await launchChromium({ secureOrigin: proxy.url });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await stack?.close();
    await photoThreadPool().close();
  });

  it('shows the playing avatar, its transcript, and says what is typed', async () => {
    const page = await browser.newPage();
    await page.goto(proxy.url);
    await page.click('#start');
    // The video plays: frames keep being presented and show a face, not a blank.
    await page.waitForFunction(
      () => {
        const v = document.querySelector('video')!;
        return v.readyState >= 2 && v.videoWidth === 512 && v.currentTime > 0.5;
      },
      undefined,
      { timeout: 20_000 },
    );
    const t0 = await page.evaluate(() => document.querySelector('video')!.currentTime);
    await page.waitForTimeout(1_000);
    const t1 = await page.evaluate(() => document.querySelector('video')!.currentTime);
    expect(t1 - t0).toBeGreaterThan(0.5);
    const spread = await page.evaluate(() => {
      const v = document.querySelector('video')!;
      const canvas = document.createElement('canvas');
      canvas.width = v.videoWidth;
      canvas.height = v.videoHeight;
      const ctx = canvas.getContext('2d')!;
      ctx.drawImage(v, 0, 0);
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let min = 255;
      let max = 0;
      for (let i = 0; i < data.length; i += 4 * 97) {
        const luma = (data[i]! + data[i + 1]! + data[i + 2]!) / 3;
        min = Math.min(min, luma);
        max = Math.max(max, luma);
      }
      return max - min;
    });
    expect(spread).toBeGreaterThan(60);

    await page.fill('#text', 'Hello from the browser page.');
    await page.click('#say button');
    await page.waitForFunction(
      () =>
        document
          .querySelector('#transcript')!
          .textContent!.includes('Hello from the browser page.'),
      undefined,
      { timeout: 20_000 },
    );
    // The page plays the avatar's audio through an <audio> element.
    expect(await page.locator('audio').count()).toBe(1);
    const shot = join(mkdtempSync(join(tmpdir(), 'visage-mint-proxy-')), 'page.png');
    await page.screenshot({ path: shot });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    console.log(`mint-proxy screenshot: ${shot}`);
    expect(proxy.sessions.size).toBe(1);
    await page.close();
  }, 60_000);

  it('talks with your own face: a picked photo becomes the avatar; a file that is not a picture says why', async () => {
    const page = await browser.newPage();
    await page.goto(proxy.url);
    // Not a picture the service takes: the page says why and lets the user pick another.
    const notAPicture = join(mkdtempSync(join(tmpdir(), 'visage-mint-proxy-')), 'notes.png');
    writeFileSync(notAPicture, 'these are notes, not a photo');
    await page.setInputFiles('#photo', notAPicture);
    await page.click('#start');
    // The service's message, which says what is wrong, not its code.
    await page.waitForFunction(
      () => document.querySelector('#status')!.textContent!.includes('not a JPEG, PNG or WebP'),
      undefined,
      { timeout: 30_000 },
    );
    expect(await page.textContent('#status')).not.toContain('unsupported_image');
    expect(await page.isDisabled('#start')).toBe(false);
    expect(proxy.photoAvatars.size).toBe(0);

    await page.setInputFiles('#photo', ASTRONAUT_PATH);
    await page.click('#start');
    await page.waitForFunction(
      () => {
        const v = document.querySelector('video')!;
        return v.readyState >= 2 && v.videoWidth === 512 && v.currentTime > 0.5;
      },
      undefined,
      { timeout: 60_000 },
    );
    expect(proxy.photoAvatars.size).toBe(1);
    const [photoId] = [...proxy.photoAvatars.values()];
    // The session the page joined shows the photo avatar.
    const sessionId = await page.evaluate(() => {
      const room = (window as unknown as { visageRoom: { name: string } }).visageRoom;
      return room.name;
    });
    const res = await visage.call('GET', '/v1/sessions?limit=100');
    const sessions = (
      (await res.json()) as {
        data: Array<{ avatar_id: string; room_name: string; status: string }>;
      }
    ).data;
    const mine = sessions.find((s) => s.room_name === sessionId && s.status !== 'ended');
    expect(mine?.avatar_id).toBe(photoId);

    await page.fill('#text', 'This is my own face talking.');
    await page.click('#say button');
    await page.waitForFunction(
      () =>
        document
          .querySelector('#transcript')!
          .textContent!.includes('This is my own face talking.'),
      undefined,
      { timeout: 30_000 },
    );
    const shot = join(mkdtempSync(join(tmpdir(), 'visage-mint-proxy-')), 'photo-page.png');
    await page.screenshot({ path: shot });
    console.log(`mint-proxy photo screenshot: ${shot}`);
    await page.close();

    // A proxy started now that the key has a photo avatar (the newest of its list) still starts
    // with a stock avatar, and offers every avatar, the photo one included, to the page.
    const later = await startMintProxy({
      apiKey: visage.secret,
      apiUrl: visage.url,
      host: address,
      port: 0,
    });
    try {
      const res = await fetch(`${later.url}/api/avatars`);
      const offered = (await res.json()) as {
        default_avatar_id: string;
        avatars: Array<{ avatar_id: string; source: string }>;
      };
      const byId = new Map(offered.avatars.map((a) => [a.avatar_id, a.source]));
      expect(byId.get(offered.default_avatar_id)).toBe('stock');
      expect(byId.get(photoId!)).toBe('photo');
      expect(offered.avatars[0]?.source).toBe('photo');
    } finally {
      await later.close();
    }
  }, 120_000);

  /** The session the page joined, as the service lists it. */
  async function joinedSession(page: import('playwright-core').Page) {
    await page
      .waitForFunction(
        () => (window as unknown as { visageRoom?: unknown }).visageRoom,
        undefined,
        { timeout: 60_000 },
      )
      .catch(async (err: unknown) => {
        throw new Error(`${String(err)}; the page said: ${await page.textContent('#status')}`);
      });
    const roomName = await page.evaluate(
      () => (window as unknown as { visageRoom: { name: string } }).visageRoom.name,
    );
    const res = await visage.call('GET', '/v1/sessions?limit=100');
    const sessions = (
      (await res.json()) as {
        data: Array<{ avatar_id: string; voice_id: string; room_name: string; status: string }>;
      }
    ).data;
    return sessions.find((s) => s.room_name === roomName && s.status !== 'ended')!;
  }

  // Issue 43: the page had no way to choose a voice.
  it("lets the page pick a stock voice, or clone the person's voice from a clip", async () => {
    const milo = AVATAR_CATALOGUE.find((a) => a.name === 'Milo')!.defaultVoice.voiceId;
    const page = await browser.newPage();
    await page.goto(proxy.url);
    await page.waitForFunction(() => document.querySelectorAll('#voice option').length > 1);
    // The first choice is the avatar's own voice; the stock voices follow.
    expect(await page.$eval('#voice', (s) => (s as HTMLSelectElement).value)).toBe('');
    await page.selectOption('#voice', milo);
    await page.click('#start');
    expect((await joinedSession(page)).voice_id).toBe(milo);
    await page.close();

    // A clip of the person (John F. Kennedy, 11 s) becomes a cloned voice the session speaks with.
    const cloning = await browser.newPage();
    await cloning.goto(proxy.url);
    await cloning.setInputFiles('#clip', 'test/fixtures/audio/real-speaker-jfk.wav');
    await cloning.click('#start');
    const session = await joinedSession(cloning);
    expect(proxy.clonedVoices.size).toBe(1);
    expect(session.voice_id).toBe([...proxy.clonedVoices.values()][0]);
    expect(session.voice_id).toMatch(/^vc_/);
    // It is now one of the key's voices, offered to pick.
    await cloning.waitForFunction(
      (id) => document.querySelector<HTMLSelectElement>('#voice')!.value === id,
      session.voice_id,
    );
    await cloning.close();
  }, 120_000);

  it("lets the page pick any of the key's avatars", async () => {
    const page = await browser.newPage();
    await page.goto(proxy.url);
    await page.waitForFunction(() => document.querySelectorAll('#choice option').length > 1);
    const options = await page.$$eval('#choice option', (all) =>
      all.map((o) => ({
        value: (o as HTMLOptionElement).value,
        selected: (o as HTMLOptionElement).selected,
      })),
    );
    const picked = options.find((o) => !o.selected)!.value;
    await page.selectOption('#choice', picked);
    await page.click('#start');
    await page.waitForFunction(() => (window as unknown as { visageRoom?: unknown }).visageRoom);
    const roomName = await page.evaluate(
      () => (window as unknown as { visageRoom: { name: string } }).visageRoom.name,
    );
    const res = await visage.call('GET', '/v1/sessions?limit=100');
    const sessions = (
      (await res.json()) as {
        data: Array<{ avatar_id: string; room_name: string; status: string }>;
      }
    ).data;
    expect(sessions.find((s) => s.room_name === roomName && s.status !== 'ended')?.avatar_id).toBe(
      picked,
    );
    await page.close();
  }, 60_000);
});
