// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DisconnectReason,
  dispose,
  ParticipantKind,
  Room,
  RoomEvent,
  TrackKind,
  type RemoteParticipant,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { RoomServiceClient, TrackSource } from 'livekit-server-sdk';
import { DisconnectReason as ServerDisconnectReason } from '../../src/devserver/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevServer } from '../../src/devserver/index.js';
import { describeWebRtc } from '../support/network.js';
import {
  API_KEY,
  API_SECRET,
  analyseSine,
  connect,
  publishMovingBar,
  publishSine,
  SINE_HZ,
  startTestServer,
  token,
  until,
  waitForEvent,
} from './harness.js';

describeWebRtc('dev server participants and grants (rtc-node)', (address) => {
  let server: DevServer;

  beforeAll(async () => {
    server = await startTestServer(address);
  });
  afterAll(async () => {
    await server?.close();
    await dispose();
  });

  it('refuses a bad token with the reason', async () => {
    const client = new Room();
    const bad = await token('any-room', 'mallory', { secret: 'not-the-secret' });
    await expect(
      client.connect(server.url, bad, { autoSubscribe: true, dynacast: false }),
    ).rejects.toThrow(/401|invalid token|signature/i);
    const noJoin = await token('any-room', 'mallory', { grant: { roomJoin: false } });
    await expect(
      new Room().connect(server.url, noJoin, { autoSubscribe: true, dynacast: false }),
    ).rejects.toThrow(/401|roomJoin|permission/i);
    expect(server.rooms.get('any-room')).toBeUndefined();
  });

  it('replaces a participant that joins again with the same identity', async () => {
    const observer = await connect(server, 'dup-room', 'observer');
    const first = await connect(server, 'dup-room', 'alice');
    await until(() => observer.remoteParticipants.has('alice'), 5_000, 'first alice');
    const firstSid = observer.remoteParticipants.get('alice')!.sid;
    const kicked = waitForEvent<[DisconnectReason]>(first, RoomEvent.Disconnected);
    const second = await connect(server, 'dup-room', 'alice');
    try {
      const [reason] = await kicked;
      expect(reason).toBe(DisconnectReason.DUPLICATE_IDENTITY);
      await until(
        () => observer.remoteParticipants.get('alice')?.sid === second.localParticipant?.sid,
        5_000,
        'observer sees the new alice',
      );
      expect(second.localParticipant?.sid).not.toBe(firstSid);
      expect([...observer.remoteParticipants.keys()]).toEqual(['alice']);
      const room = server.rooms.get('dup-room')!;
      expect([...room.participants.keys()].sort()).toEqual(['alice', 'observer']);
    } finally {
      await Promise.all([second.disconnect(), observer.disconnect(), first.disconnect()]);
    }
  });

  it('copies kind, name, metadata and attributes from the token, and relays attribute changes', async () => {
    const viewer = await connect(server, 'attr-room', 'viewer');
    const avatar = await connect(server, 'attr-room', 'avatar', {
      kind: 'agent',
      name: 'Ava',
      metadata: '{"role":"avatar"}',
      attributes: { 'lk.publish_on_behalf': 'agent-1' },
      grant: { canUpdateOwnMetadata: true },
    });
    try {
      await until(() => viewer.remoteParticipants.has('avatar'), 5_000, 'avatar visible');
      const seen = viewer.remoteParticipants.get('avatar')!;
      expect(seen.kind).toBe(ParticipantKind.AGENT);
      expect(seen.name).toBe('Ava');
      expect(seen.metadata).toBe('{"role":"avatar"}');
      expect(seen.attributes).toEqual({ 'lk.publish_on_behalf': 'agent-1' });

      const changed = waitForEvent<[Record<string, string>, RemoteParticipant]>(
        viewer,
        RoomEvent.ParticipantAttributesChanged,
      );
      await avatar.localParticipant!.setAttributes({ state: 'speaking' });
      const [changes, who] = await changed;
      expect(who.identity).toBe('avatar');
      expect(changes).toEqual({ state: 'speaking' });
      expect(viewer.remoteParticipants.get('avatar')!.attributes).toEqual({
        'lk.publish_on_behalf': 'agent-1',
        state: 'speaking',
      });

      const metadataChanged = waitForEvent(viewer, RoomEvent.ParticipantMetadataChanged);
      await avatar.localParticipant!.updateMetadata('{"role":"avatar","v":2}');
      await metadataChanged;
      expect(viewer.remoteParticipants.get('avatar')!.metadata).toBe('{"role":"avatar","v":2}');

      // Without canUpdateOwnMetadata the change is refused (SDKs that wait for the server's
      // RequestResponse reject; rtc-node 0.13 does not wait) and nobody sees it.
      await viewer.localParticipant!.setAttributes({ sneaky: 'yes' }).catch(() => undefined);
      await sleep(500);
      expect(avatar.remoteParticipants.get('viewer')!.attributes).toEqual({});
      expect(server.rooms.get('attr-room')!.participant('viewer')!.attributes).toEqual({});
    } finally {
      await Promise.all([viewer.disconnect(), avatar.disconnect()]);
    }
  });

  it('enforces publish, publish-source, data and subscribe grants', async () => {
    const publisher = await connect(server, 'grant-room', 'publisher');
    const listenOnly = await connect(server, 'grant-room', 'listener', {
      grant: { canPublish: false, canPublishData: false },
    });
    const micOnly = await connect(server, 'grant-room', 'mic-only', {
      grant: { canPublishSources: [TrackSource.MICROPHONE] },
    });
    const blind = await connect(server, 'grant-room', 'blind', { grant: { canSubscribe: false } });
    const blindTracks: RemoteTrack[] = [];
    blind.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => blindTracks.push(track));
    const publisherData: string[] = [];
    publisher.on(RoomEvent.DataReceived, (payload: Uint8Array) =>
      publisherData.push(Buffer.from(payload).toString()),
    );
    const sine = await publishSine(publisher);
    try {
      // The listener receives media but can neither publish nor send data.
      const [track] = await waitForEvent<[RemoteTrack]>(listenOnly, RoomEvent.TrackSubscribed);
      const audio = await analyseSine(track, SINE_HZ);
      expect(Math.abs(audio.frequency - SINE_HZ)).toBeLessThan(10);
      const denied = await Promise.allSettled([
        publishSine(listenOnly, 'not-allowed'),
        publishMovingBar(micOnly, { name: 'camera-not-allowed' }),
      ]);
      expect(denied.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      const micAllowed = await publishSine(micOnly, 'mic');
      await listenOnly.localParticipant!.publishData(Buffer.from('from listener'), {
        reliable: true,
      });
      await micOnly.localParticipant!.publishData(Buffer.from('from mic-only'), { reliable: true });
      await until(() => publisherData.includes('from mic-only'), 5_000, 'mic-only data');
      expect(publisherData).not.toContain('from listener');

      const room = server.rooms.get('grant-room')!;
      expect(room.participant('listener')!.tracks.size).toBe(0);
      expect([...room.participant('mic-only')!.tracks.values()].map((t) => t.info.name)).toEqual([
        'mic',
      ]);
      // The participant without canSubscribe got nothing of the two published tracks.
      expect(blindTracks).toHaveLength(0);
      expect(room.participant('blind')!.subscriptions.size).toBe(0);
      await micAllowed.stop();
    } finally {
      await sine.stop();
      await Promise.all([publisher, listenOnly, micOnly, blind].map((c) => c.disconnect()));
    }
  }, 40_000);

  it('keeps hidden participants out of everyone else’s view while they subscribe', async () => {
    const publisher = await connect(server, 'hidden-room', 'publisher');
    const recorder = await connect(server, 'hidden-room', 'recorder', { grant: { hidden: true } });
    const sine = await publishSine(publisher);
    try {
      const [track] = await waitForEvent<[RemoteTrack]>(recorder, RoomEvent.TrackSubscribed);
      expect(track.kind).toBe(TrackKind.KIND_AUDIO);
      expect(publisher.remoteParticipants.size).toBe(0);
      expect(server.rooms.get('hidden-room')!.toInfo().numParticipants).toBe(1);
    } finally {
      await sine.stop();
      await Promise.all([publisher.disconnect(), recorder.disconnect()]);
    }
  });

  it('resumes an SDK whose signal connection dropped: same participant, media goes on', async () => {
    const publisher = await connect(server, 'resume-room', 'alice');
    const watcher = await connect(server, 'resume-room', 'bob');
    const sine = await publishSine(publisher);
    try {
      const [track] = await waitForEvent<[RemoteTrack]>(watcher, RoomEvent.TrackSubscribed);
      const sid = publisher.localParticipant!.sid;
      const left: string[] = [];
      watcher.on(RoomEvent.ParticipantDisconnected, (p: RemoteParticipant) =>
        left.push(p.identity),
      );
      const reconnected = waitForEvent(publisher, RoomEvent.Reconnected, () => true, 20_000);
      const started = Date.now();
      expect(server.dropSignal('resume-room', 'alice')).toBe(true);
      await reconnected;
      console.log(`resume took ${Date.now() - started} ms`);
      const room = server.rooms.get('resume-room')!;
      expect(room.participant('alice')?.sid).toBe(sid);
      expect(room.participant('alice')?.signalLostAt).toBeUndefined();
      expect([...room.participants.keys()].sort()).toEqual(['alice', 'bob']);
      expect(left).toEqual([]);
      // Signalling works again on the new connection, and the audio never stopped.
      const changed = waitForEvent(watcher, RoomEvent.ParticipantMetadataChanged);
      await new RoomServiceClient(server.httpUrl, API_KEY, API_SECRET).updateParticipant(
        'resume-room',
        'alice',
        { metadata: 'after resume' },
      );
      await changed;
      const audio = await analyseSine(track, SINE_HZ);
      expect(Math.abs(audio.frequency - SINE_HZ)).toBeLessThan(10);
    } finally {
      // A disconnect right after a resume can hang in the SDK; the server removes them anyway.
      const bounded = (p: Promise<unknown>) => Promise.race([p, sleep(10_000)]);
      await bounded(sine.stop());
      await bounded(Promise.all([publisher.disconnect(), watcher.disconnect()]));
    }
  }, 120_000);

  it('reconnects in full, without a ghost, when the participant cannot be resumed', async () => {
    const publisher = await connect(server, 'reconnect-room', 'alice');
    const watcher = await connect(server, 'reconnect-room', 'bob');
    const sine = await publishSine(publisher);
    try {
      await waitForEvent(watcher, RoomEvent.TrackSubscribed);
      const oldSid = publisher.localParticipant!.sid;
      const reconnected = waitForEvent(publisher, RoomEvent.Reconnected, () => true, 20_000);
      const started = Date.now();
      // The signal drops and the server loses the participant (as after a server restart).
      const room = server.rooms.get('reconnect-room')!;
      const alice = room.participant('alice')!;
      expect(server.dropSignal('reconnect-room', 'alice')).toBe(true);
      room.remove(alice, ServerDisconnectReason.STATE_MISMATCH);
      await reconnected;
      console.log(`full reconnect took ${Date.now() - started} ms`);
      await until(() => room.participant('alice')?.sid !== oldSid, 5_000, 'new session');
      expect(room.participant('alice')).toBeDefined();
      expect([...room.participants.keys()].sort()).toEqual(['alice', 'bob']);
      // bob sees exactly one alice, the new one, and hears her again after the republish.
      await until(
        () => watcher.remoteParticipants.get('alice')?.sid === room.participant('alice')!.sid,
        5_000,
        'watcher sees the new alice',
      );
      expect(watcher.remoteParticipants.size).toBe(1);
      await until(
        () =>
          [...(watcher.remoteParticipants.get('alice')?.trackPublications.values() ?? [])].some(
            (p) => p.track,
          ),
        15_000,
        'republished track subscribed',
      );
      const publication = [
        ...watcher.remoteParticipants.get('alice')!.trackPublications.values(),
      ][0]!;
      const audio = await analyseSine(publication.track as RemoteTrack, SINE_HZ);
      expect(Math.abs(audio.frequency - SINE_HZ)).toBeLessThan(10);
    } finally {
      await sine.stop();
      await Promise.all([publisher.disconnect(), watcher.disconnect()]);
    }
  }, 60_000);

  it('closes a room after the last participant left, and announces creation and closing', async () => {
    const created: string[] = [];
    const closed: string[] = [];
    server.rooms.on('roomCreated', (room, origin) => created.push(`${room.name}:${origin.by}`));
    server.rooms.on('roomClosed', (room) => closed.push(room.name));
    const client = await connect(server, 'short-lived', 'alice');
    expect(created).toEqual(['short-lived:join']);
    await client.disconnect();
    await until(() => server.rooms.get('short-lived')?.participants.size === 0, 5_000, 'left');
    expect(closed).toEqual([]);
    await until(() => closed.includes('short-lived'), 5_000, 'room closed');
    expect(server.rooms.get('short-lived')).toBeUndefined();
  });
});
