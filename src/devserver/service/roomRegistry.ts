// SPDX-License-Identifier: GPL-3.0-or-later
import { EventEmitter } from 'node:events';
import { DisconnectReason, RoomConfiguration } from '@livekit/protocol';
import type { ClaimGrants } from 'livekit-server-sdk';
import { newId } from '../rtc/ids.js';
import { Room, type RoomContext, type RoomSettings } from '../rtc/room.js';

/** Why a room came to exist: hooks (agent dispatch) act differently on each. */
export type RoomOrigin =
  | { by: 'join'; claims: ClaimGrants; config?: RoomConfiguration }
  | { by: 'api'; config?: RoomConfiguration };

export interface RoomRegistryEvents {
  roomCreated: [room: Room, origin: RoomOrigin];
  roomClosed: [room: Room];
}

export interface RoomDefaults {
  /** Seconds a room nobody joined stays open (LiveKit's default is 300). */
  emptyTimeout: number;
  /** Seconds a room stays open after its last participant left. */
  departureTimeout: number;
}

/** All rooms of the server, by name; creates rooms on demand and closes idle ones. */
export class RoomRegistry extends EventEmitter<RoomRegistryEvents> {
  private readonly rooms = new Map<string, Room>();
  private readonly timers = new Map<Room, NodeJS.Timeout>();
  /** Rooms someone (not an agent) has joined: their empty timeout is the departure timeout. */
  private readonly joined = new WeakSet<Room>();
  private readonly context: RoomContext;
  private readonly defaults: RoomDefaults;

  constructor(context: RoomContext, defaults: RoomDefaults) {
    super();
    this.context = context;
    this.defaults = defaults;
  }

  get(name: string): Room | undefined {
    return this.rooms.get(name);
  }

  list(): Room[] {
    return [...this.rooms.values()];
  }

  /** Returns the room, creating it (with `origin`'s configuration) when it does not exist. */
  getOrCreate(name: string, origin: RoomOrigin): Room {
    const existing = this.rooms.get(name);
    if (existing) return existing;
    const config = origin.config;
    const settings: RoomSettings = {
      emptyTimeout: config?.emptyTimeout || this.defaults.emptyTimeout,
      departureTimeout: config?.departureTimeout || this.defaults.departureTimeout,
      maxParticipants: config?.maxParticipants ?? 0,
      metadata: config?.metadata ?? '',
    };
    const room = new Room(name, newId('RM_'), settings, {
      ...this.context,
      log: this.context.log.child({ room: name }),
    });
    this.rooms.set(name, room);
    // Agents depend on others: a room only they joined still closes on time.
    room.on('participantJoined', (participant) => {
      if (participant.isAgent) return;
      this.joined.add(room);
      this.clearTimer(room);
    });
    room.on('empty', () => this.closeLater(room, room.settings.departureTimeout));
    room.once('closed', () => {
      this.clearTimer(room);
      if (this.rooms.get(name) === room) this.rooms.delete(name);
      room.log.info('room closed');
      this.emit('roomClosed', room);
    });
    // A room created by a join is joined right away; one created through the API waits.
    this.closeLater(room, settings.emptyTimeout);
    room.log.info({ by: origin.by }, 'room created');
    this.emit('roomCreated', room, origin);
    return room;
  }

  /**
   * Applies a CreateRoom on a room that exists, as LiveKit does: non-zero timeouts replace the
   * room's, and a pending close is re-armed with the new timeout.
   */
  configure(room: Room, config: RoomConfiguration): void {
    if (config.emptyTimeout) room.settings.emptyTimeout = config.emptyTimeout;
    if (config.departureTimeout) room.settings.departureTimeout = config.departureTimeout;
    if (config.maxParticipants) room.settings.maxParticipants = config.maxParticipants;
    if (!this.timers.has(room)) return;
    const { emptyTimeout, departureTimeout } = room.settings;
    this.closeLater(room, this.joined.has(room) ? departureTimeout : emptyTimeout);
  }

  /** Reads the room configuration a token carries (`roomConfig` claim), if any. */
  static configFromClaims(claims: ClaimGrants): RoomConfiguration | undefined {
    if (!claims.roomConfig) return undefined;
    try {
      return RoomConfiguration.fromJson(claims.roomConfig as never, { ignoreUnknownFields: true });
    } catch {
      return undefined;
    }
  }

  close(name: string, reason: DisconnectReason = DisconnectReason.ROOM_DELETED): boolean {
    const room = this.rooms.get(name);
    if (!room) return false;
    room.close(reason);
    return true;
  }

  closeAll(): void {
    for (const room of this.list()) room.close(DisconnectReason.SERVER_SHUTDOWN);
  }

  private closeLater(room: Room, seconds: number): void {
    this.clearTimer(room);
    const timer = setTimeout(() => {
      this.timers.delete(room);
      if (room.independentCount === 0) room.close(DisconnectReason.ROOM_CLOSED);
    }, seconds * 1000);
    timer.unref();
    this.timers.set(room, timer);
  }

  private clearTimer(room: Room): void {
    const timer = this.timers.get(room);
    if (timer) clearTimeout(timer);
    this.timers.delete(room);
  }
}
