import { EventEmitter } from 'node:events';
import {
  ClientConfigSetting,
  Codec,
  ClientConfiguration,
  DataPacket,
  DisconnectReason,
  JoinResponse,
  LeaveRequest,
  LeaveRequest_Action,
  ParticipantInfo_State,
  ParticipantUpdate,
  Room as RoomInfo,
  RoomUpdate,
  ServerInfo,
  ServerInfo_Edition,
  SessionDescription,
  SignalTarget,
  TrackSubscribed,
  TrackUnpublishedResponse,
  TrickleRequest,
  type ParticipantPermission,
} from '@livekit/protocol';
import type { Logger } from 'pino';
import { ActiveSpeakers } from './activeSpeakers.js';
import type { IceSettings } from './peerConfig.js';
import type { Participant } from './participant.js';
import type { PublishedTrack } from './publishedTrack.js';
import { PublisherPeer } from './publisherPeer.js';
import { SubscriberPeer } from './subscriberPeer.js';
import { trackFromMedia } from './trackPublication.js';

export const SERVER_VERSION = '1.9.0';
/** Signal protocol version the server speaks (what LiveKit 1.9 announces). */
export const SERVER_PROTOCOL = 16;
const PING_INTERVAL_S = 5;
// What the forwarding path carries; browsers pick a publish codec from this list.
const ENABLED_CODECS = () => [new Codec({ mime: 'video/VP8' }), new Codec({ mime: 'audio/opus' })];
const PING_TIMEOUT_S = 15;

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
}

/**
 * One room: its participants, who receives which track, and where data goes. All signalling
 * that concerns more than one participant goes through here.
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
      enabledCodecs: ENABLED_CODECS(),
      numParticipants: participants.filter((p) => !p.hidden).length,
      numPublishers: participants.filter((p) => p.tracks.size > 0).length,
    });
  }

  isFull(): boolean {
    const max = this.settings.maxParticipants;
    return max > 0 && this.independentCount >= max;
  }

  /**
   * Settings for the SDKs. Browsers are told not to resume (livekit-client would restart ICE
   * on both connections, which werift does not do reliably as the offerer): they reconnect in
   * full. The Rust SDKs ignore the setting and resume (see RtcEndpoint).
   */
  clientConfiguration(): ClientConfiguration {
    return new ClientConfiguration({ resumeConnection: ClientConfigSetting.DISABLED });
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
      value: new JoinResponse({
        room: this.toInfo(),
        participant: participant.toInfo(),
        otherParticipants: this.visibleParticipants(participant).map((p) => p.toInfo()),
        serverVersion: SERVER_VERSION,
        // As LiveKit: the publisher connection is primary for one that may not subscribe.
        subscriberPrimary: participant.permission.canSubscribe,
        // LiveKit's fast publish: the SDK negotiates its publisher connection at once and sends
        // each later offer without its 150 ms debounce. LiveKit gives it to every publisher;
        // here only agents get it (an avatar's tracks reach the room ~200 ms sooner). The SDKs
        // first ask for /rtc/v1, which this server does not speak, and after that fallback their
        // connect() waits for the publisher connection too: given to every publisher, one
        // subscriber's join took 280-330 ms against 180, sixteen at once 6-10 s against 1.7 s.
        fastPublish: participant.isAgent && participant.permission.canPublish,
        enabledPublishCodecs: ENABLED_CODECS(),
        pingInterval: PING_INTERVAL_S,
        pingTimeout: PING_TIMEOUT_S,
        clientConfiguration: this.clientConfiguration(),
        serverInfo: new ServerInfo({
          edition: ServerInfo_Edition.Standard,
          version: SERVER_VERSION,
          protocol: SERVER_PROTOCOL,
          nodeId: this.context.nodeId,
          region: 'local',
        }),
      }),
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
    const { ice } = this.context;
    const trickle = (target: SignalTarget) => (candidateInit: string) =>
      participant.send({ case: 'trickle', value: new TrickleRequest({ candidateInit, target }) });
    participant.subscriber = new SubscriberPeer(
      ice,
      {
        onCandidate: trickle(SignalTarget.SUBSCRIBER),
        onOffer: (sdp, id) =>
          participant.send({
            case: 'offer',
            value: new SessionDescription({ type: 'offer', sdp, id }),
          }),
        onStateChange: (state) => {
          participant.log.debug({ state }, 'subscriber connection');
          if (state === 'connected' && participant.permission.canSubscribe)
            this.activate(participant);
        },
      },
      participant.log,
    );
    participant.publisher = new PublisherPeer(
      ice,
      {
        onCandidate: trickle(SignalTarget.PUBLISHER),
        onTrack: (track, transceiver, trackId) => {
          const published = trackFromMedia(participant, track, transceiver, trackId);
          if (published) this.publish(participant, published);
        },
        onMediaEnded: (mid) => {
          const track = [...participant.tracks.values()].find((t) => t.info.mid === mid);
          if (track) this.unpublish(participant, track.sid);
        },
        onData: (label, data) => this.relayData(participant, data, label !== '_lossy'),
        onStateChange: (state) => {
          participant.log.debug({ state }, 'publisher connection');
          if (state === 'connected' && !participant.permission.canSubscribe)
            this.activate(participant);
        },
      },
      participant.log,
    );
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
    const firstSubscriber = track.subscriberSids.length === 0;
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

  // ---- data -------------------------------------------------------------------------------

  /** Relays a data packet from a participant's publisher data channel. */
  relayData(sender: Participant, data: Buffer, reliable: boolean): void {
    if (!sender.permission.canPublishData) return;
    let packet: DataPacket;
    try {
      packet = DataPacket.fromBinary(data);
    } catch (err) {
      sender.log.debug({ err }, 'dropped undecodable data packet');
      return;
    }
    // The sender is whoever owns the channel, whatever the packet claims.
    packet.participantIdentity = sender.identity;
    packet.participantSid = sender.sid;
    if (packet.value.case === 'user') {
      packet.value.value.participantIdentity = sender.identity;
      packet.value.value.participantSid = sender.sid;
    }
    this.deliverData(packet, reliable, sender);
  }

  /**
   * Delivers a packet to its destinations (identities or sids; everyone when none) other than
   * the sender.
   */
  deliverData(packet: DataPacket, reliable: boolean, sender?: Participant): void {
    const identities = new Set(packet.destinationIdentities);
    const sids = new Set<string>();
    if (packet.value.case === 'user') {
      for (const identity of packet.value.value.destinationIdentities) identities.add(identity);
      for (const sid of packet.value.value.destinationSids) sids.add(sid);
    }
    const everyone = identities.size === 0 && sids.size === 0;
    const bytes = Buffer.from(packet.toBinary());
    for (const participant of this.participants.values()) {
      if (participant === sender || participant.isDisconnected) continue;
      if (!everyone && !identities.has(participant.identity) && !sids.has(participant.sid))
        continue;
      participant.subscriber?.sendData(bytes, reliable);
    }
  }
}
