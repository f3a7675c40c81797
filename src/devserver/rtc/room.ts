// SPDX-License-Identifier: GPL-3.0-or-later
import { EventEmitter } from 'node:events';
import {
  DisconnectReason,
  LeaveRequest,
  LeaveRequest_Action,
  ParticipantInfo_State,
  ParticipantUpdate,
  Room as RoomInfo,
  RoomUpdate,
  TrackSubscribed,
  TrackUnpublishedResponse,
  type ParticipantPermission,
} from '@livekit/protocol';
import type { Logger } from 'pino';
import { ActiveSpeakers } from './activeSpeakers.js';
import { relayData } from './dataRelay.js';
import { enabledCodecs, joinResponse } from './joinResponse.js';
import { LIVEKIT_DYNACAST_TIMINGS, type DynacastTimings } from '../sfu/dynacast.js';
import type { IceSettings } from './peerConfig.js';
import type { Participant } from './participant.js';
import { attachPeers } from './participantPeers.js';
import type { PublishedTrack } from './publishedTrack.js';

export interface RoomSettings {
  /** Seconds a room that nobody joined stays open. */
  emptyTimeout: number;
  /** Seconds a room stays open after the last participant left. */
  departureTimeout: number;
  maxParticipants: number;
  metadata: string;
}

export interface RoomEvents {
  participantJoined: [participant: Participant];
  participantLeft: [participant: Participant, reason: DisconnectReason];
  trackPublished: [participant: Participant, track: PublishedTrack];
  trackUnpublished: [participant: Participant, track: PublishedTrack];
  /** The room has no participants left that keep it alive (agents do not). */
  empty: [];
  closed: [];
}

export interface RoomContext {
  ice: IceSettings;
  log: Logger;
  nodeId: string;
  /** When publishers are told their video is (not) watched; LiveKit's when absent. */
  dynacast?: DynacastTimings;
}

/**
 * One room: its participants, who receives which track, and where data goes (dataRelay.ts). All
 * signalling that concerns more than one participant goes through here; what a joining
 * participant is told is in joinResponse.ts, its peer connections in participantPeers.ts.
 */
export class Room extends EventEmitter<RoomEvents> {
  readonly name: string;
  readonly sid: string;
  readonly createdAt = Date.now();
  settings: RoomSettings;
  readonly participants = new Map<string, Participant>();
  private readonly context: RoomContext;
  private readonly speakers = new ActiveSpeakers(() => this.participants.values());
  private closed = false;

  constructor(name: string, sid: string, settings: RoomSettings, context: RoomContext) {
    super();
    this.name = name;
    this.sid = sid;
    this.settings = settings;
    this.context = context;
    this.speakers.start();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get log(): Logger {
    return this.context.log;
  }

  participant(identity: string): Participant | undefined {
    return this.participants.get(identity);
  }

  /** Participants that count for emptiness and limits: agents depend on others. */
  get independentCount(): number {
    return [...this.participants.values()].filter((p) => !p.isAgent).length;
  }

  toInfo(): RoomInfo {
    const participants = [...this.participants.values()];
    return new RoomInfo({
      sid: this.sid,
      name: this.name,
      emptyTimeout: Math.ceil(this.settings.emptyTimeout),
      departureTimeout: Math.ceil(this.settings.departureTimeout),
      maxParticipants: this.settings.maxParticipants,
      creationTime: BigInt(Math.floor(this.createdAt / 1000)),
      creationTimeMs: BigInt(this.createdAt),
      metadata: this.settings.metadata,
      enabledCodecs: enabledCodecs(),
      numParticipants: participants.filter((p) => !p.hidden).length,
      numPublishers: participants.filter((p) => p.tracks.size > 0).length,
    });
  }

  isFull(): boolean {
    const max = this.settings.maxParticipants;
    return max > 0 && this.independentCount >= max;
  }

  /**
   * After a resumed signal connection: what the participant may have missed while it was
   * down (everyone's current state, a subscriber offer that went nowhere).
   */
  resync(participant: Participant): void {
    const participants = [participant, ...this.visibleParticipants(participant)];
    participant.send({
      case: 'update',
      value: new ParticipantUpdate({ participants: participants.map((p) => p.toInfo()) }),
    });
    participant.subscriber?.resendPendingOffer();
  }

  /** Adds a participant whose signal connection is open, replacing one with the same identity. */
  join(participant: Participant): void {
    const existing = this.participants.get(participant.identity);
    if (existing) this.remove(existing, DisconnectReason.DUPLICATE_IDENTITY);
    this.attachPeers(participant);
    this.participants.set(participant.identity, participant);
    participant.state = ParticipantInfo_State.JOINED;
    participant.send({
      case: 'join',
      value: joinResponse(
        this.toInfo(),
        participant,
        this.visibleParticipants(participant),
        this.context.nodeId,
      ),
    });
    this.broadcastParticipant(participant);
    if (participant.autoSubscribe && participant.permission.canSubscribe) {
      for (const other of this.participants.values()) {
        if (other === participant) continue;
        for (const track of other.tracks.values()) this.subscribe(participant, other, track);
      }
    }
    // One offer with the data channels and every track subscribed above.
    participant.subscriber?.start();
    participant.log.info('participant joined');
    this.emit('participantJoined', participant);
  }

  /**
   * Removes a participant: tells it why (when its signal is still open), stops everything it
   * published or received, and tells the others it left.
   */
  remove(participant: Participant, reason: DisconnectReason): void {
    if (this.participants.get(participant.identity) !== participant) return;
    this.participants.delete(participant.identity);
    participant.state = ParticipantInfo_State.DISCONNECTED;
    participant.disconnectReason = reason;
    participant.touch();
    if (reason !== DisconnectReason.CLIENT_INITIATED) {
      participant.send({
        case: 'leave',
        value: new LeaveRequest({
          canReconnect: false,
          reason,
          action: LeaveRequest_Action.DISCONNECT,
        }),
      });
    }
    participant.signal.close();
    for (const track of participant.tracks.values()) {
      this.stopForwarding(track);
      track.close();
    }
    for (const [trackSid, downTrack] of participant.subscriptions) {
      downTrack.close();
      this.findTrack(trackSid)?.track.removeDownTrack(participant.sid);
    }
    participant.subscriptions.clear();
    void participant.publisher?.close();
    void participant.subscriber?.close();
    this.broadcastParticipant(participant);
    participant.log.info({ reason: DisconnectReason[reason] }, 'participant left');
    this.emit('participantLeft', participant, reason);
    if (this.independentCount === 0) this.emit('empty');
  }

  /** Closes the room: everyone is removed with `reason`. */
  close(reason: DisconnectReason = DisconnectReason.ROOM_DELETED): void {
    if (this.closed) return;
    this.closed = true;
    this.speakers.stop();
    for (const participant of [...this.participants.values()]) this.remove(participant, reason);
    this.emit('closed');
    this.removeAllListeners();
  }

  // ---- publishing -------------------------------------------------------------------------

  private attachPeers(participant: Participant): void {
    attachPeers(participant, this.context.ice, {
      published: (track) => this.publish(participant, track),
      mediaEnded: (trackSid) => this.unpublish(participant, trackSid),
      data: (data, reliable) => relayData(participant, data, reliable, this.participants.values()),
      primaryConnected: () => this.activate(participant),
    });
  }

  /** The participant's primary connection is up (LiveKit's JOINED -> ACTIVE). */
  private activate(participant: Participant): void {
    if (participant.state !== ParticipantInfo_State.JOINED) return;
    participant.state = ParticipantInfo_State.ACTIVE;
    this.broadcastParticipant(participant);
  }

  private publish(participant: Participant, track: PublishedTrack): void {
    participant.tracks.set(track.sid, track);
    participant.touch();
    participant.log.info(
      { track: track.sid, type: track.info.type, mime: track.info.mimeType },
      'track published',
    );
    // Announce before any subscriber offer carries the track: SDKs drop media of unknown tracks.
    this.broadcastParticipant(participant);
    track.startDynacast(this.context.dynacast ?? LIVEKIT_DYNACAST_TIMINGS, (value) => {
      if (participant.tracks.get(track.sid) !== track) return;
      participant.log.debug(
        { track: track.sid, enabled: value.subscribedQualities.some((q) => q.enabled) },
        'subscribed quality update',
      );
      participant.send({ case: 'subscribedQualityUpdate', value });
    });
    for (const other of this.participants.values()) {
      if (other !== participant && other.autoSubscribe && other.permission.canSubscribe) {
        this.subscribe(other, participant, track);
      }
    }
    this.emit('trackPublished', participant, track);
  }

  unpublish(participant: Participant, trackSid: string): boolean {
    const track = participant.tracks.get(trackSid);
    if (!track) return false;
    participant.tracks.delete(trackSid);
    participant.touch();
    this.stopForwarding(track);
    track.close();
    participant.send({
      case: 'trackUnpublished',
      value: new TrackUnpublishedResponse({ trackSid }),
    });
    this.broadcastParticipant(participant);
    participant.log.info({ track: trackSid }, 'track unpublished');
    this.emit('trackUnpublished', participant, track);
    return true;
  }

  setTrackMuted(
    participant: Participant,
    trackSid: string,
    muted: boolean,
  ): PublishedTrack | undefined {
    const track =
      participant.tracks.get(trackSid) ??
      [...participant.tracks.values()].find((t) => t.cid === trackSid);
    if (!track) {
      const pending = [...participant.pendingTracks.values()].find((t) => t.sid === trackSid);
      if (pending) pending.muted = muted;
      return undefined;
    }
    if (track.info.muted === muted) return track;
    track.info.muted = muted;
    participant.touch();
    this.broadcastParticipant(participant);
    return track;
  }

  // ---- subscribing ------------------------------------------------------------------------

  subscribe(subscriber: Participant, publisher: Participant, track: PublishedTrack): void {
    if (subscriber.subscriptions.has(track.sid) || !subscriber.subscriber) return;
    if (!subscriber.permission.canSubscribe) return;
    // Once per track, as LiveKit does (its `everSubscribed`): a publisher cannot learn from this
    // that a later viewer came back (dynacast's SubscribedQualityUpdate says so).
    const firstSubscriber = !track.everSubscribed;
    track.everSubscribed = true;
    const downTrack = subscriber.subscriber.addTrack(publisher.sid, track);
    track.addDownTrack(subscriber.sid, downTrack);
    subscriber.subscriptions.set(track.sid, downTrack);
    // SDKs use this to know someone listens (LocalTrackSubscribed, pre-connect audio buffer).
    if (firstSubscriber) {
      publisher.send({
        case: 'trackSubscribed',
        value: new TrackSubscribed({ trackSid: track.sid }),
      });
    }
  }

  unsubscribe(subscriber: Participant, trackSid: string): void {
    const downTrack = subscriber.subscriptions.get(trackSid);
    if (!downTrack) return;
    subscriber.subscriptions.delete(trackSid);
    this.findTrack(trackSid)?.track.removeDownTrack(subscriber.sid);
    subscriber.subscriber?.removeTrack(downTrack);
  }

  /** Applies an UpdateSubscription from a participant (manual subscription). */
  updateSubscriptions(subscriber: Participant, trackSids: string[], subscribe: boolean): void {
    for (const trackSid of trackSids) {
      if (!subscribe) {
        this.unsubscribe(subscriber, trackSid);
        continue;
      }
      const found = this.findTrack(trackSid);
      if (found && found.owner !== subscriber) this.subscribe(subscriber, found.owner, found.track);
    }
  }

  findTrack(trackSid: string): { owner: Participant; track: PublishedTrack } | undefined {
    for (const owner of this.participants.values()) {
      const track = owner.tracks.get(trackSid);
      if (track) return { owner, track };
    }
    return undefined;
  }

  private stopForwarding(track: PublishedTrack): void {
    for (const subscriberSid of track.subscriberSids) {
      const subscriber = [...this.participants.values()].find((p) => p.sid === subscriberSid);
      const downTrack = track.removeDownTrack(subscriberSid);
      if (!subscriber || !downTrack) continue;
      subscriber.subscriptions.delete(track.sid);
      subscriber.subscriber?.removeTrack(downTrack);
    }
  }

  // ---- participant state ------------------------------------------------------------------

  /**
   * Changes a participant's name, metadata, attributes or permission. Attributes merge; an
   * empty value deletes the key (LiveKit's semantics).
   */
  updateParticipant(
    participant: Participant,
    change: {
      name?: string;
      metadata?: string;
      attributes?: Record<string, string>;
      permission?: ParticipantPermission;
    },
  ): void {
    if (change.name !== undefined) participant.name = change.name;
    if (change.metadata !== undefined) participant.metadata = change.metadata;
    for (const [key, value] of Object.entries(change.attributes ?? {})) {
      if (value === '') delete participant.attributes[key];
      else participant.attributes[key] = value;
    }
    if (change.permission) {
      participant.permission = change.permission;
      if (!change.permission.canSubscribe) {
        for (const trackSid of [...participant.subscriptions.keys()]) {
          this.unsubscribe(participant, trackSid);
        }
      }
      if (!change.permission.canPublish) {
        for (const trackSid of [...participant.tracks.keys()])
          this.unpublish(participant, trackSid);
      }
    }
    participant.touch();
    this.broadcastParticipant(participant);
  }

  updateMetadata(metadata: string): void {
    this.settings.metadata = metadata;
    const update = new RoomUpdate({ room: this.toInfo() });
    for (const participant of this.participants.values()) {
      participant.send({ case: 'roomUpdate', value: update });
    }
  }

  /** Sends a participant's current info to everyone who may see it (itself included). */
  broadcastParticipant(participant: Participant): void {
    const update = new ParticipantUpdate({ participants: [participant.toInfo()] });
    if (!participant.isDisconnected) participant.send({ case: 'update', value: update });
    if (participant.hidden) return;
    for (const other of this.participants.values()) {
      if (other !== participant) other.send({ case: 'update', value: update });
    }
  }

  private visibleParticipants(viewer: Participant): Participant[] {
    return [...this.participants.values()].filter((p) => p !== viewer && !p.hidden);
  }
}
