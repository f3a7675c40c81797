// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AudioSink } from '../../../src/media/room/audioSink.js';
import { PlayoutClock } from '../../../src/media/room/playoutClock.js';
import { SpeechPlayer, type PlayerEvents } from '../../../src/media/room/speechPlayer.js';
import { OUTPUT_RATE, type Utterance } from '../../../src/media/room/utterance.js';

/**
 * The speech player on a clock the test moves by hand: what the mouth shows for a video frame
 * before, during and after an utterance, after an interrupt, and where the next utterance starts.
 * The sink stands in for rtc-node's AudioSource (it takes every frame at once).
 */

/** A loud 200 Hz tone: the mouth opens wide for all of it. */
function tone(ms: number): Float32Array {
  const pcm = new Float32Array(Math.round((OUTPUT_RATE * ms) / 1000));
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = 0.5 * Math.sin((2 * Math.PI * 200 * i) / OUTPUT_RATE);
  return pcm;
}

function utterance(id: string, ms: number, finished: string[]): Utterance {
  return {
    id,
    text: null,
    mouth: 'audio',
    async *chunks() {
      yield { pcm: tone(ms) };
    },
    onFinished: () => finished.push(id),
  };
}

const quietEvents: PlayerEvents = {
  started: () => undefined,
  progress: () => undefined,
  finished: () => undefined,
  speakingChanged: () => undefined,
};

/** Lets the player's pushes and its 20 ms event ticks run. */
const settle = () => sleep(60);

describe('SpeechPlayer: the mouth for each video frame', () => {
  let nowMs = 0;
  let player: SpeechPlayer | undefined;
  const captured: number[] = [];
  const sink: AudioSink = {
    capture: (pcm) => {
      captured.push(pcm.length);
      return Promise.resolve();
    },
    clear: () => undefined,
  };

  function start(): { player: SpeechPlayer; clock: PlayoutClock } {
    nowMs = 1_000;
    const clock = new PlayoutClock(() => nowMs);
    player = new SpeechPlayer(sink, clock, quietEvents, pino({ level: 'silent' }));
    return { player, clock };
  }

  afterEach(() => player?.close());

  it('opens while the sound plays and rests once it has played out', async () => {
    const { player } = start();
    const finished: string[] = [];
    expect(player.mouthNow().openness).toBe(0);
    player.enqueue(utterance('u1', 400, finished));
    await settle();
    nowMs += 200;
    expect(player.mouthNow().openness).toBeGreaterThan(0.5);
    // The last of the sound reaches the viewer, then silence: the mouth closes and stays closed.
    nowMs += 300;
    await settle();
    expect(finished).toEqual(['u1']);
    expect(player.mouthNow().openness).toBe(0);
    nowMs += 2_000;
    expect(player.mouthNow().openness).toBe(0);
  });

  it('rests at once after an interrupt, not in the pose of the sound that was cut', async () => {
    const { player } = start();
    const finished: string[] = [];
    player.enqueue(utterance('long', 3_000, finished));
    await settle();
    nowMs += 500;
    expect(player.mouthNow().openness).toBeGreaterThan(0.5);
    expect(player.interrupt()).toEqual({ interrupted: true, droppedUtterances: 0 });
    // What was already on its way to the viewer is still seen with its sound, then no more.
    nowMs += 100;
    expect(player.mouthNow().openness).toBe(0);
    nowMs += 1_000;
    expect(player.mouthNow().openness).toBe(0);
  });

  it('starts an utterance that comes after a silence when it is pushed, not in the past', async () => {
    const { player, clock } = start();
    const finished: string[] = [];
    player.enqueue(utterance('first', 300, finished));
    await settle();
    nowMs += 2_000;
    await settle();
    expect(finished).toEqual(['first']);
    player.enqueue(utterance('second', 300, finished));
    await settle();
    // Its sound is heard from now on, and so is its mouth: open 100 ms in, done 300 ms in.
    expect(clock.queuedMs()).toBeCloseTo(300, 0);
    nowMs += 100;
    expect(player.mouthNow().openness).toBeGreaterThan(0.5);
    nowMs += 150;
    await settle();
    expect(finished).toEqual(['first']);
    nowMs += 100;
    await settle();
    expect(finished).toEqual(['first', 'second']);
  });
});

describe('SpeechPlayer: what an interrupted utterance says was heard', () => {
  let nowMs = 0;
  let player: SpeechPlayer | undefined;
  const sink: AudioSink = { capture: () => Promise.resolve(), clear: () => undefined };
  const TEXT = 'one two three four five';
  /** Each word's start in the audio, ms. */
  const WORD_STARTS = [0, 400, 800, 1_200, 1_600];

  /** 2 s of speech with its word timings, in one chunk (the sink takes it all at once). */
  function spoken(id: string): Utterance {
    let charStart = 0;
    const words = TEXT.split(' ').map((text, i) => {
      const w = { text, startMs: WORD_STARTS[i]!, endMs: WORD_STARTS[i]! + 300, charStart };
      charStart += text.length + 1;
      return { ...w, charEnd: w.charStart + text.length };
    });
    return {
      id,
      text: TEXT,
      mouth: 'audio',
      async *chunks() {
        yield { pcm: tone(2_000), words };
      },
    };
  }

  function start(): { player: SpeechPlayer; said: string[] } {
    nowMs = 1_000;
    const said: string[] = [];
    const clock = new PlayoutClock(() => nowMs);
    player = new SpeechPlayer(
      sink,
      clock,
      {
        started: (u) => said.push(`started ${u.id}`),
        progress: (u, heard) => said.push(`progress ${u.id} ${heard}`),
        finished: (u, o) => said.push(`final ${u.id} ${o.heardText}`),
        speakingChanged: () => undefined,
      },
      pino({ level: 'silent' }),
    );
    return { player, said };
  }

  afterEach(() => player?.close());

  it('carries every word started before the cut, whether or not a tick had reached it', async () => {
    const { player, said } = start();
    player.enqueue(spoken('u1'));
    await settle();
    expect(said).toEqual(['started u1', 'progress u1 one']);
    // 900 ms played, and the interrupt comes before the next tick (a busy machine's ticks are
    // late): the words heard are those that started before the cut, by the playout clock.
    nowMs += 900;
    player.interrupt();
    expect(said.at(-1)).toBe('final u1 one two three');
  });

  it('has a final when the audio played before the first tick could say it started', async () => {
    const { player, said } = start();
    player.enqueue(spoken('u1'));
    // The audio is pushed (the sink takes it at once), but no 20 ms tick has run yet.
    await new Promise((resolve) => setImmediate(resolve));
    nowMs += 500;
    player.interrupt();
    expect(said).toEqual(['started u1', 'final u1 one two']);
  });
});

describe('PlayoutClock.heardAt: the sound a listener behind playout hears now', () => {
  it('is the audio while it plays to them, and null in the silences around it', () => {
    let nowMs = 0;
    const clock = new PlayoutClock(() => nowMs);
    expect(clock.heardAt(50)).toBeNull();
    clock.push(200);
    nowMs = 30;
    expect(clock.heardAt(50)).toBeNull(); // the first sound has not reached them yet
    nowMs = 100;
    expect(clock.heardAt(50)).toBe(50);
    nowMs = 240;
    expect(clock.heardAt(50)).toBe(190);
    nowMs = 260;
    expect(clock.heardAt(50)).toBeNull(); // played out: silence, however long
    nowMs = 5_000;
    expect(clock.heardAt(50)).toBeNull();
    // The next audio continues the timeline where the last ended, and reaches them 50 ms later.
    expect(clock.push(100)).toBe(200);
    nowMs = 5_040;
    expect(clock.heardAt(50)).toBeNull();
    nowMs = 5_060;
    expect(clock.heardAt(50)).toBe(210);
    // Cut: what was on its way is still heard, then nothing.
    expect(clock.cut()).toBe(260);
    nowMs = 5_100;
    expect(clock.heardAt(50)).toBe(250);
    nowMs = 5_111;
    expect(clock.heardAt(50)).toBeNull();
  });
});
