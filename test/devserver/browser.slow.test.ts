// SPDX-License-Identifier: GPL-3.0-or-later
// Headless Chromium running livekit-client (bundled at test time) joins the dev server from a page
// served on the namespace address, subscribes to an rtc-node publisher's moving-bar video and
// sine audio, and screenshots of its <video> element show the picture, moving.
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dispose, type Room } from '@livekit/rtc-node';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevServer } from '../../src/devserver/index.js';
import { describeWebRtc } from '../support/network.js';
import type { InboundStats, PageState } from './browser/page.js';
import { launchChromium } from '../support/chromium.js';
import { startPageServer, type PageServer } from './browser/pageServer.js';
import { decodePng, type RgbaImage } from './browser/png.js';
import {
  connect,
  publishMovingBar,
  publishSine,
  startTestServer,
  token,
  until,
} from './harness.js';

// Installing chromium (first run on a bare machine) downloads ~100 MB.
const SETUP_TIMEOUT_MS = 600_000;

/** Luma (BT.601) of one pixel. */
function luma(image: RgbaImage, x: number, y: number): number {
  const i = (y * image.width + x) * 4;
  return 0.299 * image.data[i]! + 0.587 * image.data[i + 1]! + 0.114 * image.data[i + 2]!;
}

interface RowReading {
  min: number;
  max: number;
  /** Columns brighter than mid-grey: the white bar, scaled 2x and softened by VP8. */
  brightColumns: number;
  /** Centre of the bright columns, in screenshot pixels. */
  barCentre: number;
}

/** Reads the middle row of a screenshot of the video. */
function readRow(image: RgbaImage): RowReading {
  const y = Math.floor(image.height / 2);
  let min = 255;
  let max = 0;
  let bright = 0;
  let sum = 0;
  for (let x = 0; x < image.width; x++) {
    const value = luma(image, x, y);
    min = Math.min(min, value);
    max = Math.max(max, value);
    if (value > 128) {
      bright++;
      sum += x;
    }
  }
  return { min, max, brightColumns: bright, barCentre: bright ? sum / bright : -1 };
}

describeWebRtc('dev server with headless Chromium (livekit-client)', (address) => {
  let server: DevServer;
  let pages: PageServer;
  let browser: Browser | undefined;
  let publisher: Room;
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startTestServer(address);
    pages = await startPageServer(address);
    publisher = await connect(server, 'browser-room', 'alice');
    const video = await publishMovingBar(publisher);
    const audio = await publishSine(publisher);
    stops.push(video.stop, audio.stop);
    browser = await launchChromium({ secureOrigin: pages.origin });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    for (const stop of stops) await stop();
    await publisher?.disconnect();
    await pages?.close();
    await server?.close();
    await dispose();
  }, 30_000);

  const pageState = (page: Page) =>
    page.evaluate(() => (window as unknown as { visage: { state: PageState } }).visage.state);

  it('joins, subscribes to an rtc-node publisher and shows its moving video', async () => {
    const page = await browser!.newPage({ viewport: { width: 800, height: 600 } });
    const logs: string[] = [];
    page.on('console', (message) => logs.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (err) => logs.push(`pageerror: ${err.message}`));
    try {
      await page.goto(`${pages.origin}/`);
      const jwt = await token('browser-room', 'web');
      await page.evaluate(
        ([url, jwt]) =>
          (
            window as unknown as { visage: { join(u: string, t: string): Promise<void> } }
          ).visage.join(url!, jwt!),
        [server.url, jwt],
      );

      let state = await pageState(page);
      expect(state.connected).toBe(true);
      const deadline = Date.now() + 20_000;
      while (state.framesPresented < 25 && Date.now() < deadline) {
        await sleep(200);
        state = await pageState(page);
      }
      expect(state.framesPresented).toBeGreaterThanOrEqual(25);
      expect(state.subscribed).toEqual(
        expect.arrayContaining([
          { kind: 'video', participant: 'alice', mime: 'video/VP8' },
          { kind: 'audio', participant: 'alice', mime: 'audio/opus' },
        ]),
      );
      expect(server.rooms.get('browser-room')?.participant('web')?.subscriptions.size).toBe(2);
      // The browser's own receive statistics: the sine (amplitude 8000 of 32768) is heard.
      const stats = await page.evaluate(() =>
        (window as unknown as { visage: { inbound(): Promise<InboundStats[]> } }).visage.inbound(),
      );
      const audioIn = stats.find((s) => s.kind === 'audio');
      const videoIn = stats.find((s) => s.kind === 'video');
      expect(audioIn?.packetsReceived).toBeGreaterThan(25);
      expect(audioIn?.audioLevel).toBeGreaterThan(0.1);
      expect(videoIn?.framesDecoded).toBeGreaterThanOrEqual(25);

      const video = page.locator('#remote-video');
      const readings: RowReading[] = [];
      for (let shot = 0; shot < 3; shot++) {
        const png = await video.screenshot({ type: 'png' });
        // For a human look: VISAGE_TEST_SCREENSHOT_DIR=/tmp/shots keeps the screenshots.
        const keep = process.env.VISAGE_TEST_SCREENSHOT_DIR;
        if (keep) writeFileSync(join(keep, `browser-video-${shot}.png`), png);
        const image = decodePng(png);
        expect(image.width).toBeGreaterThanOrEqual(630);
        expect(image.height).toBeGreaterThanOrEqual(470);
        readings.push(readRow(image));
        await sleep(300);
      }
      for (const reading of readings) {
        // Not black and not uniform: a dark background (16) and the white bar (255).
        expect(reading.max).toBeGreaterThan(200);
        expect(reading.min).toBeLessThan(60);
        // The 16 px bar shown at 640/320 = 2x: about 32 px wide.
        expect(reading.brightColumns).toBeGreaterThan(16);
        expect(reading.brightColumns).toBeLessThan(64);
      }
      // The bar moves 200 px/s at source scale: the screenshots differ.
      const positions = new Set(readings.map((r) => Math.round(r.barCentre / 8)));
      expect(positions.size).toBeGreaterThanOrEqual(2);
    } catch (err) {
      process.stderr.write(`browser console:\n${logs.join('\n')}\n`);
      throw err;
    } finally {
      await page.close();
    }
  }, 60_000);

  it('leaves the room when the page disconnects', async () => {
    const page = await browser!.newPage();
    try {
      await page.goto(`${pages.origin}/`);
      const jwt = await token('browser-room', 'web-2');
      await page.evaluate(
        ([url, jwt]) =>
          (
            window as unknown as { visage: { join(u: string, t: string): Promise<void> } }
          ).visage.join(url!, jwt!),
        [server.url, jwt],
      );
      await until(() => !!server.rooms.get('browser-room')?.participant('web-2'), 10_000, 'join');
      await page.evaluate(() =>
        (window as unknown as { room: { disconnect(): Promise<void> } }).room.disconnect(),
      );
      await until(() => !server.rooms.get('browser-room')?.participant('web-2'), 10_000, 'leave');
    } finally {
      await page.close();
    }
  }, 30_000);
});
