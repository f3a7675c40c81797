// SPDX-License-Identifier: GPL-3.0-or-later
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  encodeFaceMessage,
  faceFrameSchema,
  OCULUS_OF_VISAGE,
  OCULUS_VISEMES,
  parseFaceMessages,
  VISAGE_VISEMES,
} from '@visage-avatar/client/api';
import { VISEMES } from '../../../src/media/lipsync/index.js';
import { FaceStream, type FaceStreamTransport } from '../../../src/media/room/faceStream.js';
import { PlayoutClock } from '../../../src/media/room/playoutClock.js';

/** The room's text-stream writer, held open until `release()`: a slow room. */
function slowRoom() {
  const streams: { lines: string[]; closed: boolean }[] = [];
  const waiting: (() => void)[] = [];
  let held = true;
  const transport: FaceStreamTransport = {
    streamText: () => {
      const s = { lines: [] as string[], closed: false };
      streams.push(s);
      return Promise.resolve({
        write: (text: string) =>
          new Promise<void>((resolve) => {
            const done = () => {
              s.lines.push(text);
              resolve();
            };
            if (held) waiting.push(done);
            else done();
          }),
        close: () => {
          s.closed = true;
          return Promise.resolve();
        },
      });
    },
  };
  return {
    transport,
    streams,
    release: () => {
      held = false;
      for (const w of waiting.splice(0)) w();
    },
  };
}

const POSE = { lift: 1.234, sway: 0, lid: 0, gaze: 'center', look: 'idle' } as const;

describe('the visage.face wire format', () => {
  it("names every one of Visage's mouth shapes, and maps each to an Oculus viseme", () => {
    expect([...VISAGE_VISEMES]).toEqual([...VISEMES]);
    for (const v of VISAGE_VISEMES) expect(OCULUS_VISEMES).toContain(OCULUS_OF_VISAGE[v]);
    expect(OCULUS_OF_VISAGE.MBP).toBe('PP');
    expect(OCULUS_OF_VISAGE.rest).toBe('sil');
  });

  it('is one JSON message per line; lines that are not one are skipped', () => {
    const face = {
      type: 'face',
      t: 1_764_445_467_123.4,
      viseme: 'AA',
      open: 0.62,
      oculus: 'aa',
      lid: 0.1,
      gaze: 'center',
      sway: 1,
      lift: 1.5,
      look: 'speaking',
    } as const;
    const text =
      encodeFaceMessage(face) +
      'not json\n{"type":"face"}\n' +
      encodeFaceMessage({ type: 'cut', t: 5 });
    expect(parseFaceMessages(text)).toEqual([face, { type: 'cut', t: 5 }]);
    expect(faceFrameSchema.safeParse({ ...face, open: 2 }).success).toBe(false);
  });
});

const line = (tMs: number, viseme: 'AA' | 'rest' = 'AA', openness = 0.5) => ({
  tMs,
  pose: POSE,
  mouth: { viseme, openness },
});

describe('FaceStream', () => {
  it('starts each stream with its start line, writes a batch of face lines at once, refuses batches a slow room cannot take, never words or cuts', async () => {
    const room = slowRoom();
    const stream = new FaceStream(
      room.transport,
      {
        avatarId: 'avt_x',
        width: 512,
        height: 512,
        fps: 25,
        atlasUrls: [
          { url: 'https://visage.example/v1/avatars/avt_x/atlas?expires=1&sig=x', expires: 1 },
        ],
      },
      pino({ level: 'silent' }),
    );
    stream.restart(1000);
    const taken: boolean[] = [];
    for (let i = 0; i < 10; i++) {
      taken.push(stream.frames([0, 1, 2, 3, 4].map((k) => line(1000 + (i * 5 + k) * 40))));
    }
    // Three batches wait for the room at most; the rest are refused, not queued.
    expect(taken).toEqual([true, true, true, false, false, false, false, false, false, false]);
    stream.together(() => {
      stream.words('utt_0123456789abcdefghijklmn', [{ text: 'hello', startMs: 1200, endMs: 1400 }]);
      stream.visemes('utt_0123456789abcdefghijklmn', [{ viseme: 'E', startMs: 1200, endMs: 1300 }]);
    });
    stream.cut(1500);
    room.release();
    await stream.flushed();
    // The start line, a write per batch, words and visemes together, the cut.
    const writes = room.streams[0]!.lines;
    expect(writes.map((w) => parseFaceMessages(w).length)).toEqual([1, 5, 5, 5, 2, 1]);
    expect(writes.every((w) => w.endsWith('\n'))).toBe(true);
    const lines = parseFaceMessages(writes.join(''));
    expect(lines[0]).toMatchObject({
      type: 'start',
      v: 1,
      avatar_id: 'avt_x',
      t: 1000,
      atlas_url: 'https://visage.example/v1/avatars/avt_x/atlas?expires=1&sig=x',
    });
    const faces = lines.filter((l) => l.type === 'face');
    expect(faces.map((f) => f.t)).toEqual(Array.from({ length: 15 }, (_, i) => 1000 + i * 40));
    expect(faces[0]).toMatchObject({ viseme: 'AA', open: 0.5, oculus: 'aa', lift: 1.23 });
    expect(lines.filter((l) => l.type === 'words')).toHaveLength(1);
    expect(lines.at(-1)).toEqual({ type: 'cut', t: 1500 });
    expect(stream.writes).toBe(6);

    // A participant joined: a new stream from its own start line, the old one closed.
    stream.restart(2000);
    expect(stream.frames([line(2000, 'rest', 0)])).toBe(true);
    await stream.flushed();
    expect(room.streams[0]!.closed).toBe(true);
    const second = parseFaceMessages(room.streams[1]!.lines.join(''));
    expect(second.map((l) => l.type)).toEqual(['start', 'face']);
    expect(second[1]).toMatchObject({ oculus: 'sil', open: 0 });
    await stream.close();
    expect(room.streams[1]!.closed).toBe(true);
  });
});

describe('PlayoutClock.wallAt: when queued audio leaves', () => {
  it('follows the running anchor for pushed audio, and starts audio after a silence now', () => {
    let now = 1000;
    const clock = new PlayoutClock(() => now);
    // Silence: audio about to be pushed leaves now.
    expect(clock.wallAt(0)).toBe(1000);
    clock.push(500);
    expect(clock.wallAt(200)).toBe(1200);
    now = 1100;
    // Still playing: the next chunk follows the first one.
    expect(clock.wallAt(500)).toBe(1500);
    now = 3000;
    // Played out long ago: the next push restarts playout now.
    expect(clock.wallAt(500)).toBe(3000);
  });
});
