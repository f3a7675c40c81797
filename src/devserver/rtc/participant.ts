// SPDX-License-Identifier: GPL-3.0-or-later
import {
  ParticipantInfo,
  ParticipantInfo_Kind,
  ParticipantInfo_State,
  type DisconnectReason,
  type ParticipantPermission,
  type SignalResponse,
  type TrackInfo,
} from '@livekit/protocol';
import type { ClaimGrants } from 'livekit-server-sdk';
import type { Logger } from 'pino';
import type { DownTrack } from '../sfu/downTrack.js';
import type { PublishedTrack } from './publishedTrack.js';
import type { PublisherPeer } from './publisherPeer.js';
import type { SignalSink } from '../service/signalSink.js';
import type { SubscriberPeer } from './subscriberPeer.js';

export interface ParticipantInit {
  sid: string;
  identity: string;
  name: string;
  metadata: string;
  attributes: Record<string, string>;
  kind: ParticipantInfo_Kind;
  permission: ParticipantPermission;
  autoSubscribe: boolean;
  /** The verified token claims, for hooks that need more (e.g. the room configuration). */
  claims: ClaimGrants;
  log: Logger;
}

/** A participant of a room: identity, permissions, published tracks, subscriptions, peers. */
export class Participant {
  readonly sid: string;
  readonly identity: string;
  name: string;
  metadata: string;
  attributes: Record<string, string>;
  readonly kind: ParticipantInfo_Kind;
  permission: ParticipantPermission;
  readonly autoSubscribe: boolean;
  readonly claims: ClaimGrants;
  readonly joinedAt = Date.now();
  readonly log: Logger;
  state = ParticipantInfo_State.JOINING;
  disconnectReason?: DisconnectReason;
  /** Incremented on every change so SDKs apply updates in order. */
  version = 1;
  signal: SignalSink;
  publisher?: PublisherPeer;
  subscriber?: SubscriberPeer;
  /** Tracks announced by AddTrackRequest whose media has not arrived yet, by cid. */
  readonly pendingTracks = new Map<string, TrackInfo>();
  /** Tracks with media, by track sid. */
  readonly tracks = new Map<string, PublishedTrack>();
  /** What this participant receives, by track sid. */
  readonly subscriptions = new Map<string, DownTrack>();
  /** Set when the signal connection dropped without a leave; cleared when it is replaced. */
  signalLostAt?: number;

  constructor(init: ParticipantInit, signal: SignalSink) {
    this.sid = init.sid;
    this.identity = init.identity;
    this.name = init.name;
    this.metadata = init.metadata;
    this.attributes = { ...init.attributes };
    this.kind = init.kind;
    this.permission = init.permission;
    this.autoSubscribe = init.autoSubscribe;
    this.claims = init.claims;
    this.log = init.log;
    this.signal = signal;
  }

  get hidden(): boolean {
    return this.permission.hidden;
  }

  /** Agents do not keep a room alive on their own (LiveKit treats them as dependent). */
  get isAgent(): boolean {
    return this.kind === ParticipantInfo_Kind.AGENT;
  }

  get isDisconnected(): boolean {
    return this.state === ParticipantInfo_State.DISCONNECTED;
  }

  send(message: SignalResponse['message']): void {
    this.signal.send(message);
  }

  touch(): void {
    this.version++;
  }

  toInfo(): ParticipantInfo {
    const tracks = [...this.tracks.values()].map((track) => track.info);
    return new ParticipantInfo({
      sid: this.sid,
      identity: this.identity,
      name: this.name,
      metadata: this.metadata,
      attributes: { ...this.attributes },
      state: this.state,
      tracks,
      joinedAt: BigInt(Math.floor(this.joinedAt / 1000)),
      joinedAtMs: BigInt(this.joinedAt),
      version: this.version,
      permission: this.permission,
      isPublisher: tracks.length > 0,
      kind: this.kind,
      disconnectReason: this.disconnectReason,
    });
  }
}
