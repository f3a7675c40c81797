// SPDX-License-Identifier: GPL-3.0-or-later
// Client mode sends the face ahead of its sound, a batch per write, and sends times again when
// what it sent turned out wrong; a reader that follows the stream's rule (FaceTimeline) draws the
// right mouth at every instant.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { FaceTimeline, parseFaceMessages } from '@visage-avatar/client/api';
import type { MouthPose } from '../../../src/media/lipsync/index.js';
import { FaceMotion } from '../../../src/media/render/index.js';
import { FACE_BATCH_TICKS, FaceAhead } from '../../../src/media/room/faceAhead.js';
import { FaceStream } from '../../../src/media/room/faceStream.js';
import { PlayoutClock } from '../../../src/media/room/playoutClock.js';

/** The sender's Unix clock of the fake `now` (ms). */
const EPOCH = 1_764_000_000_000;

/**
 * A session's face in client mode on a hand-driven clock: speech is audio pushed on the playout
 * clock, whose mouth is open (AA) from `speechFrom` to `speechTo` on the playout timeline.
 */
function setUp() {
  let now = 10_000;
  const writes: string[] = [];
  const stream = new FaceStream(
    {
      streamText: () =>
        Promise.resolve({
          write: (text: string) => {
            writes.push(text);
            return Promise.resolve();
          },
          close: () => Promise.resolve(),
        }),
    },
    { avatarId: 'avt_x', width: 512, height: 512, fps: 25 },
    pino({ level: 'silent' }),
  );
  const clock = new PlayoutClock(() => now);
  let speech = { from: Infinity, to: -Infinity };
  const mouthIn = (aheadMs: number): MouthPose => {
    const t = clock.leavingIn(aheadMs);
    return t !== null && t >= speech.from && t < speech.to
      ? { viseme: 'AA', openness: 0.8 }
      : { viseme: 'rest', openness: 0 };
  };
  let parked = false;
  /** More audio is coming (the player still pushes an utterance). */
  let coming = false;
  const ahead = new FaceAhead({
    motion: new FaceMotion(7),
    stream,
    mouthIn,
    knownAheadMs: () => (coming ? clock.queuedMs() : undefined),
    state: () => ({ parked, conversation: undefined }),
    bornAt: 0,
    toEpochMs: (ms) => EPOCH + ms,
    fps: 25,
    now: () => now,
  });
  return {
    stream,
    ahead,
    clock,
    writes,
    advance: async (ms: number) => {
      for (let i = 0; i < ms / 40; i++) {
        now += 40;
        ahead.tick();
        await stream.flushed();
      }
    },
    /** Audio of `ms` pushed now, the mouth open. */
    speak: (ms: number) => {
      const from = clock.endMs;
      speech = { from, to: from + ms };
      clock.push(ms);
    },
    /** `ms` more of the same speech pushed now (continuing what was pushed, if it plays still). */
    speakMore: (ms: number) => {
      const from = clock.queuedMs() > 0 ? speech.from : clock.endMs;
      speech = { from, to: clock.endMs + ms };
      clock.push(ms);
    },
    coming: (c: boolean) => (coming = c),
    cut: () => clock.cut(),
    park: (p: boolean) => (parked = p),
    now: () => now,
  };
}

const timeline = (writes: string[]) => {
  const tl = new FaceTimeline();
  for (const w of writes) for (const m of parseFaceMessages(w)) tl.push(m);
  return tl;
};

describe('FaceAhead', () => {
  it('writes a batch of lines ahead of time, contiguous, about one write per batch', async () => {
    const s = setUp();
    s.stream.restart(EPOCH + s.now());
    s.ahead.tick();
    await s.advance(2000);
    const faceWrites = s.writes.slice(1);
    // 2 s at 25 fps: 50 lines, in writes of four or five.
    expect(faceWrites.length).toBeGreaterThanOrEqual(10);
    expect(faceWrites.length).toBeLessThanOrEqual(13);
    const lines = faceWrites.flatMap((w) => parseFaceMessages(w));
    for (const w of faceWrites) expect(parseFaceMessages(w).length).toBeGreaterThanOrEqual(4);
    const ts = lines.map((l) => (l.type === 'face' ? l.t : NaN));
    // Evenly spaced, none sent twice, each sent before its time came.
    for (let i = 1; i < ts.length; i++) expect(ts[i]! - ts[i - 1]!).toBeCloseTo(40, 5);
    expect(ts.at(-1)! - (EPOCH + s.now())).toBeGreaterThan(0);
    expect(ts.at(-1)! - (EPOCH + s.now())).toBeLessThanOrEqual(FACE_BATCH_TICKS * 40);
  });

  it('sends the times already sent again when audio is queued or cut: the reader draws the mouth of the sound at every instant', async () => {
    const s = setUp();
    s.stream.restart(EPOCH + s.now());
    await s.advance(400);
    // Lines up to 200 ms ahead said "rest"; now 600 ms of speech starts leaving at once.
    const speechAt = EPOCH + s.now();
    s.speak(600);
    s.ahead.refresh();
    await s.advance(400);
    let tl = timeline(s.writes);
    // The face at every tick of the speech that has left: open; just before it: at rest.
    for (let t = speechAt; t < EPOCH + s.now(); t += 40) expect(tl.at(t)?.open).toBe(0.8);
    expect(tl.at(speechAt - 1)?.open).toBe(0);

    // Cut mid-speech: from the cut on, the mouth is shut, though open lines were sent ahead.
    const cutAt = EPOCH + s.now();
    expect(tl.at(cutAt + 120)?.open).toBe(0.8);
    s.cut();
    s.ahead.refresh();
    await s.advance(400);
    tl = timeline(s.writes);
    expect(tl.at(cutAt - 40)?.open).toBe(0.8);
    for (let t = cutAt + 1; t < EPOCH + s.now(); t += 40) expect(tl.at(t)?.open).toBe(0);

    // Without a refresh, the next tick finds the times whose mouth changed and sends them again.
    const moreAt = EPOCH + s.now();
    s.speak(400);
    await s.advance(400);
    tl = timeline(s.writes);
    for (let t = moreAt + 40; t < EPOCH + s.now(); t += 40) expect(tl.at(t)?.open).toBe(0.8);
  });

  it('sends no further than the audio pushed while more is coming: audio pushed late is not sent twice', async () => {
    const s = setUp();
    s.stream.restart(EPOCH + s.now());
    await s.advance(400);
    const before = s.writes.length;
    const speechAt = EPOCH + s.now();
    // A loaded machine: 2 s of speech pushed 80 ms at a time, the queue 40 to 120 ms deep (under
    // a batch), then the last audio pushed, then silence.
    s.coming(true);
    s.speakMore(120);
    s.ahead.refresh();
    for (let i = 0; i < 23; i++) {
      await s.advance(80);
      s.speakMore(80);
      s.ahead.refresh();
    }
    s.coming(false);
    s.ahead.refresh();
    await s.advance(1000);
    const faces = s.writes.slice(before).flatMap((w) => parseFaceMessages(w));
    const times = new Set(faces.map((m) => (m.type === 'face' ? m.t : NaN)));
    // Every time once.
    expect(faces.length).toBe(times.size);
    const tl = timeline(s.writes);
    for (let t = speechAt; t < speechAt + 1960; t += 40) expect(tl.at(t)?.open).toBe(0.8);
    for (let t = speechAt + 2000; t < EPOCH + s.now(); t += 40) expect(tl.at(t)?.open).toBe(0);
    // Silence again: whole batches.
    const last = s.writes.slice(-3).map((w) => parseFaceMessages(w).length);
    expect(Math.min(...last)).toBeGreaterThanOrEqual(4);
  });

  it('sends whole batches in a pause of the audio while more is said to be coming, and the speech after it in step', async () => {
    const s = setUp();
    s.stream.restart(EPOCH + s.now());
    await s.advance(400);
    // An agent's own TTS: its audio stream stays open between sentences (the utterance is still
    // pushed), with nothing to push for 2 s.
    s.coming(true);
    s.speak(400);
    s.ahead.refresh();
    await s.advance(400);
    const before = s.writes.length;
    await s.advance(2000);
    const pause = s.writes.slice(before).map((w) => parseFaceMessages(w).length);
    // 2 s at 25 fps in writes of a batch (a write per tick would be 50): a tick at a time only
    // for the first batch's time after the audio ran dry, which may be a late push.
    expect(pause.length).toBeLessThanOrEqual(15);
    expect(pause.slice(FACE_BATCH_TICKS).every((n) => n >= 4)).toBe(true);
    // The next sentence: in step from its first tick.
    const moreAt = EPOCH + s.now();
    s.speak(400);
    s.ahead.refresh();
    await s.advance(400);
    const tl = timeline(s.writes);
    for (let t = moreAt; t < moreAt + 360; t += 40) expect(tl.at(t)?.open).toBe(0.8);
    expect(tl.at(moreAt - 1)?.open).toBe(0);
  });

  it('sends times again when audio comes later than the batch, with nothing said to be coming', async () => {
    const s = setUp();
    s.stream.restart(EPOCH + s.now());
    await s.advance(400);
    const before = s.writes.length;
    s.speakMore(120);
    s.ahead.refresh();
    for (let i = 0; i < 10; i++) {
      await s.advance(80);
      s.speakMore(80);
      s.ahead.refresh();
    }
    const faces = s.writes.slice(before).flatMap((w) => parseFaceMessages(w));
    const times = new Set(faces.map((m) => (m.type === 'face' ? m.t : NaN)));
    // Without the player's word, the rest sent beyond the audio is sent again (the cost above).
    expect(faces.length).toBeGreaterThan(times.size * 1.3);
  });

  it('parks at once and spaces the lines at the parked rate; a new stream gets the times ahead again', async () => {
    const s = setUp();
    s.stream.restart(EPOCH + s.now());
    await s.advance(400);
    const parkedAt = EPOCH + s.now();
    s.park(true);
    s.ahead.setFps(5);
    s.ahead.refresh({ pose: true });
    await s.advance(3000);
    const tl = timeline(s.writes);
    const parked = tl.lines().filter((l) => l.t > parkedAt);
    expect(parked.every((l) => l.look === 'parked')).toBe(true);
    const spacing = (parked.at(-1)!.t - parked[0]!.t) / (parked.length - 1);
    expect(spacing).toBeGreaterThan(150);

    // Someone joined: a new stream, whose first face lines cover from now on.
    const before = s.writes.length;
    s.stream.restart(EPOCH + s.now());
    s.ahead.refresh({ all: true });
    await s.stream.flushed();
    const fresh = s.writes.slice(before).flatMap((w) => parseFaceMessages(w));
    expect(fresh[0]!.type).toBe('start');
    const faces = fresh.filter((m) => m.type === 'face');
    expect(faces.length).toBeGreaterThan(0);
    expect(faces[0]!.t).toBeLessThanOrEqual(EPOCH + s.now() + 200);
  });
});

describe('FaceTimeline: the reader of the stream', () => {
  const face = (t: number, open: number) =>
    ({
      type: 'face',
      t,
      viseme: open > 0 ? 'AA' : 'rest',
      open,
      oculus: open > 0 ? 'aa' : 'sil',
      lid: 0,
      gaze: 'center',
      sway: 0,
      lift: 0,
      look: 'idle',
    }) as const;

  it('a face line replaces the lines received before it at or after its time; a start clears', () => {
    const tl = new FaceTimeline();
    for (const t of [0, 40, 80, 120]) tl.push(face(t, 0));
    tl.push(face(80, 0.5));
    tl.push(face(120, 0.6));
    expect(tl.lines().map((l) => [l.t, l.open])).toEqual([
      [0, 0],
      [40, 0],
      [80, 0.5],
      [120, 0.6],
    ]);
    tl.push(face(50, 0));
    expect(tl.lines().map((l) => l.t)).toEqual([0, 40, 50]);
    expect(tl.at(-1)).toBeUndefined();
    expect(tl.at(45)?.t).toBe(40);
    expect(tl.at(1000)?.t).toBe(50);
    tl.forget(45);
    expect(tl.lines().map((l) => l.t)).toEqual([40, 50]);
    tl.push({ type: 'start', v: 1, avatar_id: 'avt_x', width: 1, height: 1, fps: 25, t: 0 });
    expect(tl.lines()).toEqual([]);
  });
});

describe('PlayoutClock.leavingIn: the sound leaving ahead of now', () => {
  it('reads pushed audio ahead, and nothing in a silence, beyond what is pushed, or after a cut', () => {
    let now = 1000;
    const clock = new PlayoutClock(() => now);
    expect(clock.leavingIn(0)).toBeNull();
    clock.push(300);
    now = 1100;
    expect(clock.leavingIn(0)).toBe(100);
    expect(clock.leavingIn(150)).toBe(250);
    // Not pushed yet: it leaves when it is pushed, which a loaded machine may do late.
    expect(clock.leavingIn(250)).toBeNull();
    clock.cut();
    expect(clock.leavingIn(50)).toBeNull();
  });
});
