// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { DataPacket_Kind, ListRoomsRequest, ListRoomsResponse } from '@livekit/protocol';
import {
  dispose,
  ParticipantKind,
  RoomEvent,
  type RemoteParticipant,
  type RemoteTrackPublication,
} from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient, TrackType } from 'livekit-server-sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevServer } from '../../src/devserver/index.js';
import { describeWebRtc } from '../support/network.js';
import {
  API_KEY,
  API_SECRET,
  connect,
  publishSine,
  startTestServer,
  until,
  waitForEvent,
} from './harness.js';

describeWebRtc('dev server RoomService (livekit-server-sdk)', (address) => {
  let server: DevServer;
  let api: RoomServiceClient;

  beforeAll(async () => {
    server = await startTestServer(address);
    api = new RoomServiceClient(server.httpUrl, API_KEY, API_SECRET);
  });
  afterAll(async () => {
    await server?.close();
    await dispose();
  });

  it('creates, lists and deletes rooms', async () => {
    const created = await api.createRoom({
      name: 'api-room',
      emptyTimeout: 60,
      maxParticipants: 5,
      metadata: 'first',
    });
    expect(created.name).toBe('api-room');
    expect(created.sid).toMatch(/^RM_/);
    expect(created.maxParticipants).toBe(5);
    expect(created.metadata).toBe('first');
    // Creating an existing room returns it.
    expect((await api.createRoom({ name: 'api-room' })).sid).toBe(created.sid);
    await api.createRoom({ name: 'other-room' });

    expect((await api.listRooms()).map((r) => r.name).sort()).toEqual(['api-room', 'other-room']);
    expect((await api.listRooms(['other-room'])).map((r) => r.name)).toEqual(['other-room']);

    const updated = await api.updateRoomMetadata('api-room', 'second');
    expect(updated.metadata).toBe('second');

    await api.deleteRoom('other-room');
    expect((await api.listRooms()).map((r) => r.name)).toEqual(['api-room']);
    await expect(api.deleteRoom('other-room')).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('lists, gets, updates, mutes and removes participants, and sends data', async () => {
    const alice = await connect(server, 'people-room', 'alice');
    const bob = await connect(server, 'people-room', 'bob', { kind: 'agent' });
    const sine = await publishSine(alice);
    try {
      await waitForEvent(bob, RoomEvent.TrackSubscribed);

      const participants = await api.listParticipants('people-room');
      expect(participants.map((p) => p.identity).sort()).toEqual(['alice', 'bob']);
      const info = await api.getParticipant('people-room', 'alice');
      expect(info.sid).toBe(alice.localParticipant!.sid);
      expect(info.tracks).toHaveLength(1);
      expect(info.tracks[0]!.type).toBe(TrackType.AUDIO);
      expect((await api.getParticipant('people-room', 'bob')).kind).toBe(ParticipantKind.AGENT);
      await expect(api.getParticipant('people-room', 'nobody')).rejects.toMatchObject({
        status: 404,
      });

      // UpdateParticipant: metadata, name and attributes reach the other participant.
      const attributesSeen = waitForEvent<[Record<string, string>, RemoteParticipant]>(
        bob,
        RoomEvent.ParticipantAttributesChanged,
      );
      const updated = await api.updateParticipant('people-room', 'alice', {
        metadata: 'meta',
        name: 'Alice',
        attributes: { mood: 'happy' },
      });
      expect(updated).toMatchObject({
        metadata: 'meta',
        name: 'Alice',
        attributes: { mood: 'happy' },
      });
      await attributesSeen;
      const aliceAtBob = bob.remoteParticipants.get('alice')!;
      await until(
        () => aliceAtBob.metadata === 'meta' && aliceAtBob.name === 'Alice',
        5_000,
        'info',
      );

      // MutePublishedTrack: the publisher's SDK mutes and bob sees the track muted.
      const trackSid = info.tracks[0]!.sid;
      const muted = waitForEvent<[RemoteTrackPublication]>(bob, RoomEvent.TrackMuted);
      const muteResult = await api.mutePublishedTrack('people-room', 'alice', trackSid, true);
      expect(muteResult.sid).toBe(trackSid);
      expect(muteResult.muted).toBe(true);
      await muted;
      await expect(
        api.mutePublishedTrack('people-room', 'alice', trackSid, false),
      ).rejects.toMatchObject({ code: 'failed_precondition' });

      // SendData: from the server, with a topic, to one destination.
      const received: { text: string; topic?: string; from?: string }[] = [];
      bob.on(
        RoomEvent.DataReceived,
        (payload: Uint8Array, from?: RemoteParticipant, _kind?: unknown, topic?: string) => {
          received.push({ text: Buffer.from(payload).toString(), topic, from: from?.identity });
        },
      );
      const aliceReceived: string[] = [];
      alice.on(RoomEvent.DataReceived, (payload: Uint8Array) =>
        aliceReceived.push(Buffer.from(payload).toString()),
      );
      await api.sendData('people-room', Buffer.from('from the server'), DataPacket_Kind.RELIABLE, {
        topic: 'announcements',
        destinationIdentities: ['bob'],
      });
      await until(() => received.length === 1, 5_000, 'server data');
      expect(received[0]).toMatchObject({ text: 'from the server', topic: 'announcements' });
      expect(aliceReceived).toEqual([]);

      // RemoveParticipant: alice is disconnected, bob sees her leave.
      const gone = waitForEvent<[RemoteParticipant]>(bob, RoomEvent.ParticipantDisconnected);
      const kicked = waitForEvent(alice, RoomEvent.Disconnected);
      await api.removeParticipant('people-room', 'alice');
      await kicked;
      expect((await gone)[0].identity).toBe('alice');
      expect((await api.listParticipants('people-room')).map((p) => p.identity)).toEqual(['bob']);
    } finally {
      await sine.stop();
      await Promise.all([alice.disconnect(), bob.disconnect()]);
    }
  });

  it('applies room limits and metadata to connected SDKs, and permission changes to participants', async () => {
    await api.createRoom({ name: 'limited-room', maxParticipants: 2 });
    const alice = await connect(server, 'limited-room', 'alice');
    const bob = await connect(server, 'limited-room', 'bob');
    try {
      await expect(connect(server, 'limited-room', 'carol')).rejects.toThrow(/full|403/i);

      const metadataSeen = waitForEvent<[string]>(alice, RoomEvent.RoomMetadataChanged);
      await api.updateRoomMetadata('limited-room', 'now with metadata');
      const [metadata] = await metadataSeen;
      expect(metadata).toBe('now with metadata');
      expect(alice.metadata).toBe('now with metadata');

      // Revoking canPublishData stops bob's packets at the server.
      const received: string[] = [];
      alice.on(RoomEvent.DataReceived, (payload: Uint8Array) =>
        received.push(Buffer.from(payload).toString()),
      );
      await bob.localParticipant!.publishData(Buffer.from('before'), { reliable: true });
      await until(() => received.includes('before'), 5_000, 'data before the change');
      const info = await api.updateParticipant('limited-room', 'bob', {
        permission: { canPublish: true, canSubscribe: true, canPublishData: false },
      });
      expect(info.permission?.canPublishData).toBe(false);
      await bob.localParticipant!.publishData(Buffer.from('after'), { reliable: true });
      await alice.localParticipant!.publishData(Buffer.from('ping'), { reliable: true });
      await sleep(500);
      expect(received).toEqual(['before']);
    } finally {
      await Promise.all([alice.disconnect(), bob.disconnect()]);
    }
  });

  it('enforces roomCreate, roomList and roomAdmin grants with Twirp errors', async () => {
    const wrongSecret = new RoomServiceClient(server.httpUrl, API_KEY, 'wrong');
    await expect(wrongSecret.listRooms()).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });

    const call = async (method: string, grant: object, body: object) => {
      const at = new AccessToken(API_KEY, API_SECRET, { identity: 'ops' });
      at.addGrant(grant);
      const response = await fetch(`${server.httpUrl}/twirp/livekit.RoomService/${method}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${await at.toJwt()}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await call('ListRooms', { roomCreate: true }, {})).toMatchObject({
      status: 403,
      body: { code: 'permission_denied' },
    });
    expect(await call('CreateRoom', { roomList: true }, { name: 'x' })).toMatchObject({
      status: 403,
    });
    expect(await call('DeleteRoom', { roomList: true }, { room: 'x' })).toMatchObject({
      status: 403,
    });
    // roomAdmin only counts for the room named in the grant.
    await api.createRoom({ name: 'admin-room' });
    expect(
      await call(
        'ListParticipants',
        { roomAdmin: true, room: 'elsewhere' },
        { room: 'admin-room' },
      ),
    ).toMatchObject({ status: 403 });
    expect(
      await call(
        'ListParticipants',
        { roomAdmin: true, room: 'admin-room' },
        { room: 'admin-room' },
      ),
    ).toMatchObject({ status: 200, body: {} });
    expect(await call('NoSuchMethod', { roomList: true }, {})).toMatchObject({
      status: 404,
      body: { code: 'bad_route' },
    });
    expect(await call('ListRooms', { roomList: true }, { names: 5 })).toMatchObject({
      status: 400,
      body: { code: 'malformed' },
    });
  });

  it('speaks protobuf as well as JSON', async () => {
    await api.createRoom({ name: 'proto-room' });
    const at = new AccessToken(API_KEY, API_SECRET, { identity: 'ops' });
    at.addGrant({ roomList: true });
    const response = await fetch(`${server.httpUrl}/twirp/livekit.RoomService/ListRooms`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await at.toJwt()}`,
        'Content-Type': 'application/protobuf',
      },
      body: Buffer.from(new ListRoomsRequest({ names: ['proto-room'] }).toBinary()),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/protobuf');
    const decoded = ListRoomsResponse.fromBinary(new Uint8Array(await response.arrayBuffer()));
    expect(decoded.rooms.map((r) => r.name)).toEqual(['proto-room']);
  });
});
