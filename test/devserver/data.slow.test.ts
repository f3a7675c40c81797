// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import {
  dispose,
  RoomEvent,
  type RemoteParticipant,
  type Room,
  type ByteStreamReader,
  type TextStreamReader,
} from '@livekit/rtc-node';
import { DataPacket_Kind, RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevServer } from '../../src/devserver/index.js';
import { describeWebRtc } from '../support/network.js';
import { API_KEY, API_SECRET, connect, startTestServer, until } from './harness.js';

interface Received {
  from?: string;
  topic?: string;
  text: string;
}

function collectData(room: Room): Received[] {
  const received: Received[] = [];
  room.on(
    RoomEvent.DataReceived,
    (payload: Uint8Array, participant?: RemoteParticipant, _kind?: unknown, topic?: string) => {
      received.push({
        from: participant?.identity,
        topic,
        text: Buffer.from(payload).toString('utf8'),
      });
    },
  );
  return received;
}

describeWebRtc('dev server data (rtc-node)', (address) => {
  let server: DevServer;
  let alice: Room;
  let bob: Room;
  let carol: Room;
  let received: Record<'bob' | 'carol', Received[]>;

  beforeAll(async () => {
    server = await startTestServer(address);
    alice = await connect(server, 'data-room', 'alice');
    bob = await connect(server, 'data-room', 'bob');
    carol = await connect(server, 'data-room', 'carol');
    received = { bob: collectData(bob), carol: collectData(carol) };
    await until(() => alice.remoteParticipants.size === 2, 5_000, 'alice sees both');
  });
  afterAll(async () => {
    await Promise.all([alice?.disconnect(), bob?.disconnect(), carol?.disconnect()]);
    await server?.close();
    await dispose();
  });

  it('relays reliable and lossy packets with their topic and sender to everyone else', async () => {
    await alice.localParticipant!.publishData(Buffer.from('hello all'), {
      reliable: true,
      topic: 'lk.chat',
    });
    await until(
      () => received.bob.some((m) => m.text === 'hello all') && received.carol.length > 0,
      5_000,
      'broadcast packet',
    );
    expect(received.bob.find((m) => m.text === 'hello all')).toEqual({
      from: 'alice',
      topic: 'lk.chat',
      text: 'hello all',
    });
    expect(received.carol.find((m) => m.text === 'hello all')?.from).toBe('alice');

    // Lossy packets may drop on a real network, not on this one: a few must arrive.
    for (let i = 0; i < 5; i++) {
      await alice.localParticipant!.publishData(Buffer.from(`lossy ${i}`), {
        reliable: false,
        topic: 'telemetry',
      });
    }
    await until(() => received.bob.some((m) => m.topic === 'telemetry'), 5_000, 'lossy packet');
  });

  it('delivers packets only to their destination identities', async () => {
    await alice.localParticipant!.publishData(Buffer.from('just for carol'), {
      reliable: true,
      topic: 'direct',
      destination_identities: ['carol'],
    });
    await alice.localParticipant!.publishData(Buffer.from('marker'), {
      reliable: true,
      topic: 'direct',
    });
    // Reliable packets are ordered: once bob has the marker, the direct one would have come.
    await until(() => received.bob.some((m) => m.text === 'marker'), 5_000, 'marker');
    await until(() => received.carol.some((m) => m.text === 'marker'), 5_000, 'marker');
    expect(received.carol.some((m) => m.text === 'just for carol')).toBe(true);
    expect(received.bob.some((m) => m.text === 'just for carol')).toBe(false);
  });

  it('carries a text stream and a byte stream (header, chunks, trailer) unchanged', async () => {
    const texts: { from: string; text: string; topic: string }[] = [];
    bob.registerTextStreamHandler('lk.transcription', (reader: TextStreamReader, from) => {
      void reader
        .readAll()
        .then((text) => texts.push({ from: from.identity, text, topic: 'lk.transcription' }));
    });
    const bytes: { name: string; data: Buffer; attributes: Record<string, string> }[] = [];
    bob.registerByteStreamHandler('lk.audio_stream', (reader: ByteStreamReader) => {
      void (async () => {
        const chunks: Uint8Array[] = [];
        for await (const chunk of reader) chunks.push(chunk);
        bytes.push({
          name: reader.info.name,
          data: Buffer.concat(chunks),
          attributes: reader.info.attributes ?? {},
        });
      })();
    });

    const longText = 'The quick brown fox jumps over the lazy dog. '.repeat(800); // ~36 kB
    await alice.localParticipant!.sendText(longText, {
      topic: 'lk.transcription',
      destinationIdentities: ['bob'],
    });
    const payload = Buffer.alloc(100_000);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) % 251;
    const writer = await alice.localParticipant!.streamBytes({
      name: 'pcm',
      topic: 'lk.audio_stream',
      attributes: { sample_rate: '48000', num_channels: '1' },
      destinationIdentities: ['bob'],
    });
    for (let offset = 0; offset < payload.length; offset += 15_000) {
      await writer.write(payload.subarray(offset, offset + 15_000));
    }
    await writer.close();

    await until(() => texts.length === 1 && bytes.length === 1, 10_000, 'streams');
    expect(texts[0]).toEqual({ from: 'alice', text: longText, topic: 'lk.transcription' });
    expect(bytes[0]!.name).toBe('pcm');
    expect(bytes[0]!.attributes).toMatchObject({ sample_rate: '48000', num_channels: '1' });
    expect(bytes[0]!.data.equals(payload)).toBe(true);
  });

  it('delivers the first packets to a new participant without a retransmission delay', async () => {
    // Without the server's priming packets, the second packet on a fresh association waits
    // for werift's 1 s retransmission timer (see SubscriberPeer).
    const fresh = await connect(server, 'fresh-data-room', 'fresh');
    const api = new RoomServiceClient(server.httpUrl, API_KEY, API_SECRET);
    const arrivals: number[] = [];
    let sentAt = 0;
    fresh.on(RoomEvent.DataReceived, () => arrivals.push(Date.now() - sentAt));
    try {
      for (let i = 0; i < 3; i++) {
        sentAt = Date.now();
        await api.sendData('fresh-data-room', Buffer.from(`n${i}`), DataPacket_Kind.LOSSY, {});
        await until(() => arrivals.length === i + 1, 3_000, `packet ${i}`);
        await sleep(300);
      }
      console.log(`first packets arrived after ${arrivals.join(', ')} ms`);
      expect(Math.max(...arrivals)).toBeLessThan(600);
    } finally {
      await fresh.disconnect();
    }
  });

  it('completes an RPC round trip (request, ack, response) and reports handler errors', async () => {
    bob.localParticipant!.registerRpcMethod('greet', async (data) => {
      return JSON.stringify({ hello: data.callerIdentity, echo: data.payload });
    });
    bob.localParticipant!.registerRpcMethod('fail', async () => {
      throw new Error('nope');
    });
    const started = Date.now();
    const response = await alice.localParticipant!.performRpc({
      destinationIdentity: 'bob',
      method: 'greet',
      payload: 'ping',
    });
    const firstMs = Date.now() - started;
    expect(JSON.parse(response)).toEqual({ hello: 'alice', echo: 'ping' });
    // The first call also waits for bob's publisher connection (SDKs open it lazily).
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = Date.now();
      await alice.localParticipant!.performRpc({
        destinationIdentity: 'bob',
        method: 'greet',
        payload: `${i}`,
      });
      times.push(Date.now() - t);
    }
    console.log(`RPC round trips: first ${firstMs} ms, then ${times.join(', ')} ms`);
    await expect(
      alice.localParticipant!.performRpc({
        destinationIdentity: 'bob',
        method: 'fail',
        payload: '',
      }),
    ).rejects.toThrow();
    await expect(
      alice.localParticipant!.performRpc({
        destinationIdentity: 'bob',
        method: 'unknown-method',
        payload: '',
      }),
    ).rejects.toThrow(/unsupported|not supported|method/i);
  });
});
