// SPDX-License-Identifier: GPL-3.0-or-later
// A `client` mode session end to end: the avatar publishes its voice and no video, and the face
// as the `visage.face` text stream, timed on the sender's clock so that a viewer can draw it in
// step with the audio it hears.
import { setTimeout as sleep } from 'node:timers/promises';
import { TrackKind } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  FACE_STREAM_TOPIC,
  FaceTimeline,
  parseFaceMessages,
  type FaceFrame,
  type FaceMessage,
} from '@visage-avatar/client/api';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { describeWebRtc } from '../../support/network.js';
import { AvatarClient, type AudioSample } from './avatarClient.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

const AVATAR = AVATAR_CATALOGUE[0]!;

interface Received {
  message: FaceMessage;
  /** The stream it came on (a new one starts for every participant who joins). */
  stream: string;
  /** When the test got it, on the client's clock. */
  atMs: number;
  /** Its line's length in bytes. */
  bytes: number;
  /** Which write (text-stream chunk) it came in, counted over all streams. */
  chunk: number;
}

/** A viewer that reads the face stream besides the audio (an AvatarClient joined with it). */
function readFaces(client: AvatarClient): Received[] {
  const received: Received[] = [];
  let chunks = 0;
  client.room.registerTextStreamHandler(FACE_STREAM_TOPIC, (reader) => {
    const stream = reader.info.streamId;
    void (async () => {
      for await (const chunk of reader) {
        const lines = chunk.split('\n').filter((l) => l !== '');
        const messages = parseFaceMessages(chunk);
        chunks++;
        messages.forEach((message, i) =>
          received.push({
            message,
            stream,
            atMs: client.now(),
            bytes: Buffer.byteLength(lines[i] ?? '') + 1,
            chunk: chunks,
          }),
        );
      }
    })().catch(() => undefined); // cut by leaving the room
  });
  return received;
}

/** A sender-clock time (Unix ms) on the client's clock. */
const onClientClock = (client: AvatarClient, unixMs: number) =>
  unixMs - (performance.timeOrigin + client.t0);

/**
 * The face lines in force, as a renderer reads the stream: lines come ahead of time, and times
 * sent again replace what was sent before (FaceTimeline). Over one stream's messages.
 */
const frames = (r: Received[]) => {
  const timeline = new FaceTimeline();
  for (const x of r) if (x.message.type !== 'start') timeline.push(x.message);
  return [...timeline.lines()];
};

/**
 * The lag (ms) at which the stream's mouth openness best matches the loudness of the audio the
 * client received, and the correlation there: positive when the audio comes after the face
 * message's time (as it should: the jitter buffer holds it). The audio is placed by its own
 * timeline (samples played out), shifted by the least delivery delay seen, not by when a busy
 * test process was handed each chunk.
 */
function mouthToAudio(
  faces: FaceFrame[],
  audio: AudioSample[],
  client: AvatarClient,
): { lagMs: number; r: number } {
  const offset = Math.min(...audio.map((a) => a.atMs - a.playoutMs));
  const heardAt = (a: AudioSample) => a.playoutMs + offset;
  const from = Math.min(...audio.map(heardAt));
  const to = Math.max(...audio.map(heardAt));
  const bins = Math.floor((to - from) / 10);
  const loud = new Float64Array(bins);
  for (const a of audio) {
    const i = Math.floor((heardAt(a) - from) / 10);
    if (i >= 0 && i < bins) loud[i] = Math.max(loud[i]!, a.rms);
  }
  const open = (ms: number) => {
    let best: FaceFrame | undefined;
    for (const f of faces) if (onClientClock(client, f.t) <= ms) best = f;
    return best?.open ?? 0;
  };
  let best = { lagMs: 0, r: -1 };
  for (let lag = -300; lag <= 500; lag += 10) {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < bins; i++) {
      xs.push(open(from + i * 10 - lag));
      ys.push(loud[i]!);
    }
    const r = correlation(xs, ys);
    if (r > best.r) best = { lagMs: lag, r };
  }
  return best;
}

function correlation(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? 0 : sxy / Math.sqrt(sxx * syy);
}

describeWebRtc('a client mode session: no video, the face as a timed text stream', (address) => {
  let stack: MediaStack;

  beforeAll(async () => {
    stack = await startMediaStack(address);
  }, 60_000);

  afterAll(() => stack?.close());

  it('publishes audio and no video, and a face stream in step with the audio, words and visemes ahead, a cut on interrupt', async () => {
    const created = await stack.create(AVATAR.avatarId, { mode: 'client' });
    expect(created).toMatchObject({ mode: 'client' });
    const client = new AvatarClient();
    const received = readFaces(client);
    await client.join(created.livekit_url, created.participant_token);
    await client.waitFor(() => client.audio.length > 0, 15_000, 'the avatar audio');
    await client.waitFor(() => frames(received).length > 25, 15_000, 'a second of face');

    // No video track: the avatar's only publication is its voice.
    const avatar = client.room.remoteParticipants.get(created.agent_identity)!;
    const kinds = [...avatar.trackPublications.values()].map((p) => p.kind);
    expect(kinds).toEqual([TrackKind.KIND_AUDIO]);
    const got = await stack.visage.call('GET', `/v1/sessions/${created.session_id}`);
    expect(await got.json()).toMatchObject({ mode: 'client' });

    // The stream begins with its start line; the face at rest, idle, at the avatar's rate.
    // Its atlas is where the session's answer says (a signed URL, no API key in it).
    expect(created.atlas_url).toMatch(/\/v1\/avatars\/avt_\w+\/atlas\?expires=\d+&sig=/);
    expect(received[0]!.message).toMatchObject({
      type: 'start',
      v: 1,
      avatar_id: AVATAR.avatarId,
      atlas_url: created.atlas_url,
    });
    const idle = frames(received);
    expect(idle.every((f) => f.open === 0 && f.viseme === 'rest' && f.look === 'idle')).toBe(true);
    const span = idle.at(-1)!.t - idle[0]!.t;
    // 25 a second, fewer on a loaded machine (ticks run late, a batch the room has not taken is
    // skipped: 13.8 beside two CPU hogs and a browser test); parked is 5.
    expect(idle.length / (span / 1000)).toBeGreaterThan(10);

    // A browser fetches the atlas first. Not kept yet (tests compress no stock atlas at start-up),
    // it is answered with a fast compression, and the kept one is made in a child at nice 19
    // while the avatar speaks below: the sync must not suffer from it.
    const atlas = await fetch(created.atlas_url!, { headers: { 'accept-encoding': 'br' } });
    expect(atlas.status).toBe(200);
    expect((await atlas.arrayBuffer()).byteLength).toBeGreaterThan(0);

    // Speech: words and visemes ahead of the audio, the mouth moving with the sound.
    const text = 'Maybe my mother bought a big blue map, but please pay me back by Monday.';
    const speakFrom = client.now();
    const res = await stack.visage.call('POST', `/v1/sessions/${created.session_id}/speak`, {
      json: { text },
    });
    expect(res.status).toBe(202);
    await client.waitFor(() => client.finals().length > 0, 30_000, 'the final');
    await sleep(300);
    const after = received.filter((r) => r.atMs >= speakFrom);
    const words = after.flatMap((r) => (r.message.type === 'words' ? r.message.words : []));
    expect(words.map((w) => w.text).join(' ')).toBe(text.replace(/[.,]/g, ''));
    const visemes = after.flatMap((r) => (r.message.type === 'visemes' ? r.message.visemes : []));
    expect(visemes.filter((v) => v.viseme === 'PP').length).toBeGreaterThanOrEqual(10);
    const speaking = frames(after);
    expect(speaking.filter((f) => f.open > 0.3).length).toBeGreaterThan(10);
    // Words come when their audio is queued: the first chunk's as its sound leaves, later ones
    // ahead of it. How far ahead they arrive is a timing (printed below), not asserted: beside two
    // CPU hogs a later chunk's words arrived 850 ms after their sound had left.
    const wordLines = after.filter((r) => r.message.type === 'words');
    const leads = wordLines.map((r) =>
      r.message.type === 'words' ? onClientClock(client, r.message.words[0]!.start) - r.atMs : NaN,
    );
    const sync = mouthToAudio(
      speaking,
      client.audio.filter((a) => a.atMs >= speakFrom),
      client,
    );
    const spanMs = after.at(-1)!.atMs - after[0]!.atMs;
    const bytesPerS = (after.reduce((n, r) => n + r.bytes, 0) / spanMs) * 1000;
    const writesPerS = ((after.at(-1)!.chunk - after[0]!.chunk + 1) / spanMs) * 1000;
    console.log(
      `face stream: ${Math.round(bytesPerS)} B/s of lines and ${writesPerS.toFixed(1)} writes/s while speaking; ${speaking.length} face lines in force while speaking (${after.filter((r) => r.message.type === 'face').length} received), ${words.length} words in ${wordLines.length} lines (arriving ${leads.map((l) => Math.round(l)).join(', ')} ms before their first word left), ${visemes.length} visemes; mouth vs received audio: lag ${sync.lagMs} ms, r ${sync.r.toFixed(2)}`,
    );
    // Batched: far fewer writes than lines (25 lines a second).
    expect(writesPerS).toBeLessThan(12);
    expect(sync.r).toBeGreaterThan(0.5);
    // The lag is the audio's way to this client: the network and its jitter buffer, which a
    // loaded machine grows (410 ms in a rehearsal beside two CPU hogs, 120 ms at load 10). Below
    // zero, the face would come after its sound. (A page draws by the audio it plays, not by this.)
    expect(sync.lagMs).toBeGreaterThanOrEqual(-100);
    expect(sync.lagMs).toBeLessThanOrEqual(600);

    // An interrupt: a cut line, and the mouth shut from the cut on.
    const long =
      'This is a long answer that keeps going for a while, so that there is time to interrupt it in the middle of a sentence.';
    const longFrom = client.now();
    await stack.visage.call('POST', `/v1/sessions/${created.session_id}/speak`, {
      json: { text: long },
    });
    await client.waitFor(
      () => frames(received.filter((r) => r.atMs >= longFrom)).some((f) => f.open > 0.3),
      30_000,
      'the long answer speaking',
    );
    await sleep(500);
    const cutRes = await stack.visage.call('POST', `/v1/sessions/${created.session_id}/interrupt`);
    expect(cutRes.status).toBe(200);
    await client.waitFor(
      () => received.some((r) => r.message.type === 'cut'),
      5_000,
      'the cut message',
    );
    await sleep(600);
    const cut = received.find((r) => r.message.type === 'cut')!.message as { t: number };
    const afterCut = frames(received).filter((f) => f.t > cut.t + 60);
    expect(afterCut.length).toBeGreaterThan(5);
    expect(afterCut.every((f) => f.open === 0)).toBe(true);

    // Parked (waiting_state): the parked look, at the parked rate; back to idle after.
    const parkRes = await stack.visage.call(
      'POST',
      `/v1/sessions/${created.session_id}/waiting_state`,
      { json: { waiting: true } },
    );
    expect(parkRes.status).toBe(200);
    const parkedFrom = client.now();
    await sleep(2_500);
    const parked = frames(received.filter((r) => r.atMs >= parkedFrom + 500));
    expect(parked.length).toBeGreaterThan(3);
    expect(parked.every((f) => f.look === 'parked')).toBe(true);
    const parkedRate = (parked.length - 1) / ((parked.at(-1)!.t - parked[0]!.t) / 1000);
    expect(parkedRate).toBeLessThan(8);
    await stack.visage.call('POST', `/v1/sessions/${created.session_id}/waiting_state`, {
      json: { waiting: false },
    });
    const activeFrom = client.now();
    await client.waitFor(
      () => frames(received.filter((r) => r.atMs >= activeFrom)).some((f) => f.look === 'idle'),
      5_000,
      'the idle look again',
    );

    // A viewer who joins later reads a stream from its start.
    const late = new AvatarClient();
    const lateReceived = readFaces(late);
    const token = new AccessToken(stack.apiKey, stack.apiSecret, { identity: 'late-viewer' });
    token.addGrant({ room: created.room_name, roomJoin: true, canSubscribe: true });
    await late.join(created.livekit_url, await token.toJwt());
    await late.waitFor(() => frames(lateReceived).length > 5, 10_000, "the late viewer's face");
    expect(lateReceived[0]!.message.type).toBe('start');
    await late.leave();
    await client.leave();
    await stack.visage.call('DELETE', `/v1/sessions/${created.session_id}`);
  }, 120_000);
});
