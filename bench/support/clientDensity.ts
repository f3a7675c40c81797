// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { FACE_STREAM_TOPIC, parseFaceMessages } from '@visage-avatar/client/api';
import type { VisageClient } from '@visage-avatar/client';
import { AvatarClient } from '../../test/media/room/avatarClient.js';
import type { BenchNode } from './benchNode.js';

/** One step of the client mode density run: `sessions` avatars speaking at once. */
export interface ClientStep {
  sessions: number;
  /** The fewest `face` times a second any viewer got (25 = all; times sent again not counted). */
  minFaceRate: number;
  /** The most face-stream writes (text-stream chunks) a second any viewer got. */
  maxWritesPerS: number;
  minAudioPacketsPerS: number;
  maxConcealed: number;
  /** Visage's processes (API and media), cores per session. */
  cpuPerSession: number;
  livekitCpuPerSession: number;
  ok: boolean;
}

/** Full rate in client mode: the face's 25 lines a second, unbroken audio (as video mode's). */
const FULL = { faceRate: 24, audioPacketsPerS: 48, concealed: 0.01 };

/** A viewer of a client mode session: its audio played out, its face lines counted. */
async function openClientSession(visage: VisageClient, avatarId: string) {
  const s = await visage.sessions.create({ avatar_id: avatarId, mode: 'client' });
  const client = new AvatarClient({ streams: false });
  // Lines come ahead, and times whose mouth changed come again: count new times, and chunks.
  const face = { lines: 0, writes: 0, latest: -Infinity };
  client.room.registerTextStreamHandler(FACE_STREAM_TOPIC, (reader) => {
    void (async () => {
      for await (const chunk of reader) {
        face.writes++;
        for (const m of parseFaceMessages(chunk)) {
          if (m.type !== 'face' || m.t <= face.latest) continue;
          face.latest = m.t;
          face.lines++;
        }
      }
    })().catch(() => undefined);
  });
  await client.join(s.livekit_url, s.participant_token!);
  const deadline = performance.now() + 15_000;
  while (face.lines === 0) {
    if (performance.now() > deadline) throw new Error('no face line in 15 s');
    await sleep(100);
  }
  return { s, client, face };
}

/**
 * How many client mode sessions speak at once on `node` at full rate, and what each costs
 * (issue 48: against video mode's `capacity` in the same run). The same scenario as video
 * mode's: every avatar talking without a pause, a viewer each in another process.
 */
export async function clientCapacity(
  node: BenchNode,
  o: { avatarId: string; text: string; steps: number[]; windowMs: number },
): Promise<ClientStep[]> {
  const { visage } = node;
  const steps: ClientStep[] = [];
  for (const n of o.steps) {
    const open = [];
    for (let i = 0; i < n; i++) open.push(await openClientSession(visage, o.avatarId));
    let keepTalking = true;
    const talkers = open.map(async ({ s, client }) => {
      while (keepTalking) {
        const { utterance_id } = await visage.sessions.speak(s.session_id, o.text);
        await client.waitFor(
          () => !keepTalking || client.finals().some((m) => m.utterance_id === utterance_id),
          60_000,
        );
      }
    });
    await sleep(2_000);
    const c0 = await node.cpu();
    const r0 = await Promise.all(open.map(({ client }) => client.receivedStats()));
    const f0 = open.map(({ face }) => ({ ...face, at: performance.now() }));
    await sleep(o.windowMs);
    const f1 = open.map(({ face }) => ({ ...face, at: performance.now() }));
    const r1 = await Promise.all(open.map(({ client }) => client.receivedStats()));
    const c1 = await node.cpu();
    const per = open.map((_, i) => {
      const [a, b] = [r0[i]!, r1[i]!];
      // The receiver stamps its statistics with the video's timestamp only (there is none here):
      // the window is the bench's own, taken around the two readings.
      const seconds = (f1[i]!.at - f0[i]!.at) / 1000;
      const samples = b.audioSamples - a.audioSamples;
      return {
        faceRate: ((f1[i]!.lines - f0[i]!.lines) / (f1[i]!.at - f0[i]!.at)) * 1000,
        writesPerS: ((f1[i]!.writes - f0[i]!.writes) / (f1[i]!.at - f0[i]!.at)) * 1000,
        audioPacketsPerS: seconds > 0 ? (b.audioPackets - a.audioPackets) / seconds : 0,
        concealed: samples > 0 ? (b.concealedSamples - a.concealedSamples) / samples : 1,
      };
    });
    const cores = (c1.cpuMs - c0.cpuMs) / (c1.at - c0.at);
    const step: ClientStep = {
      sessions: n,
      minFaceRate: Math.min(...per.map((p) => p.faceRate)),
      maxWritesPerS: Math.max(...per.map((p) => p.writesPerS)),
      minAudioPacketsPerS: Math.min(...per.map((p) => p.audioPacketsPerS)),
      maxConcealed: Math.max(...per.map((p) => p.concealed)),
      cpuPerSession: cores / n,
      livekitCpuPerSession: (c1.livekitCpuMs - c0.livekitCpuMs) / (c1.at - c0.at) / n,
      ok: false,
    };
    step.ok =
      step.minFaceRate >= FULL.faceRate &&
      step.minAudioPacketsPerS >= FULL.audioPacketsPerS &&
      step.maxConcealed < FULL.concealed;
    steps.push(step);
    keepTalking = false;
    for (const x of open) {
      await visage.sessions.interrupt(x.s.session_id).catch(() => undefined);
      await x.client.leave();
      await visage.sessions.delete(x.s.session_id);
    }
    await Promise.allSettled(talkers);
    if (!step.ok) break;
  }
  return steps;
}
