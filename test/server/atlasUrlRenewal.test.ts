// SPDX-License-Identifier: GPL-3.0-or-later
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parseFaceMessages } from '@visage-avatar/client/api';
import { FaceStream, type FaceStreamTransport } from '../../src/media/room/faceStream.js';
import { AtlasSigner } from '../../src/server/assets/atlasSignature.js';

/**
 * The face stream of a session that outlives a day (issue 48): the URLs a create signs (today's
 * and each later day's of the session's longest run), and the `start` line of each new stream
 * naming the one of its day, so a viewer who joins on the third day gets a URL that opens the
 * atlas, not the create's, expired. Real signer and stream; the clock is the test's.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const secret = () => Promise.resolve(Buffer.alloc(32, 7));
const BASE = 'https://visage.example';
const AVATAR = 'avt_Renewal0000000000000001';

/** A room that takes every write at once, a stream per `restart`. */
function room() {
  const streams: string[][] = [];
  const transport: FaceStreamTransport = {
    streamText: () => {
      const lines: string[] = [];
      streams.push(lines);
      return Promise.resolve({
        write: (text: string) => Promise.resolve(void lines.push(text)),
        close: () => Promise.resolve(),
      });
    },
  };
  return { transport, streams };
}

describe('atlas URLs of a long session', () => {
  it("each new stream's start line names a URL that opens the atlas that day, for the session's whole run", async () => {
    const created = Date.UTC(2026, 10, 30, 17, 25);
    const maxDurationS = 3 * 86_400;
    const urls = await new AtlasSigner({ secret, now: () => created }).urls(
      BASE,
      AVATAR,
      maxDurationS,
    );
    // Today's (the create's) and each later day's, a day apart.
    expect(urls).toHaveLength(4);
    expect(urls[0]!.url).toBe(
      await new AtlasSigner({ secret, now: () => created }).url(BASE, AVATAR),
    );
    expect(urls.map((u) => u.expires - urls[0]!.expires)).toEqual(
      [0, 1, 2, 3].map((d) => d * 86_400),
    );

    const r = room();
    const stream = new FaceStream(
      r.transport,
      { avatarId: AVATAR, width: 512, height: 512, fps: 25, atlasUrls: urls },
      pino({ level: 'silent' }),
    );
    const at = [
      0,
      6 * HOUR_MS,
      7 * HOUR_MS,
      DAY_MS + HOUR_MS,
      2 * DAY_MS + 20 * HOUR_MS,
      maxDurationS * 1000,
    ];
    for (const offset of at) stream.restart(created + offset);
    await stream.flushed();
    const named = r.streams.map((lines) => {
      const start = parseFaceMessages(lines.join(''))[0]!;
      expect(start.type).toBe('start');
      return (start as { atlas_url: string }).atlas_url;
    });
    expect(named[0]).toBe(urls[0]!.url);
    for (const [i, offset] of at.entries()) {
      const now = created + offset;
      const url = new URL(named[i]!);
      const verifier = new AtlasSigner({ secret, now: () => now });
      const left = await verifier.verify(
        AVATAR,
        Number(url.searchParams.get('expires')),
        url.searchParams.get('sig')!,
      );
      // Good at that moment, for the rest of that day at least: the same URL the service's
      // `GET /v1/sessions/{id}` hands out then.
      expect(left, `the stream started ${offset / HOUR_MS} h in`).toBeGreaterThanOrEqual(86_400);
      expect(named[i]).toBe(await verifier.url(BASE, AVATAR));
    }
    // The create's URL is expired by the third day: what the stream named before this.
    const third = new AtlasSigner({ secret, now: () => created + 2 * DAY_MS + 20 * HOUR_MS });
    const first = new URL(urls[0]!.url);
    expect(
      await third.verify(
        AVATAR,
        Number(first.searchParams.get('expires')),
        first.searchParams.get('sig')!,
      ),
    ).toBeUndefined();
  });
});
