// SPDX-License-Identifier: GPL-3.0-or-later
import {
  CreateRoomRequest,
  DataPacket,
  DataPacket_Kind,
  DeleteRoomRequest,
  DeleteRoomResponse,
  DisconnectReason,
  ListParticipantsRequest,
  ListParticipantsResponse,
  ListRoomsRequest,
  ListRoomsResponse,
  MuteRoomTrackRequest,
  MuteRoomTrackResponse,
  MuteTrackRequest,
  RemoveParticipantResponse,
  RoomConfiguration,
  RoomParticipantIdentity,
  SendDataRequest,
  SendDataResponse,
  UpdateParticipantRequest,
  UpdateRoomMetadataRequest,
  UpdateSubscriptionsRequest,
  UpdateSubscriptionsResponse,
  UserPacket,
} from '@livekit/protocol';
import type { ClaimGrants } from 'livekit-server-sdk';
import { deliverData } from '../../rtc/dataRelay.js';
import type { Room } from '../../rtc/room.js';
import type { RoomRegistry } from '../roomRegistry.js';
import { TwirpError } from './twirpError.js';
import { twirpMethod, type TwirpService } from './twirpServer.js';

/** `livekit.RoomService`, with LiveKit's grant rules for each method. */
export function roomService(rooms: RoomRegistry): TwirpService {
  const roomFor = (claims: ClaimGrants, name: string): Room => {
    requireRoomAdmin(claims, name);
    const room = rooms.get(name);
    if (!room) throw new TwirpError('not_found', `room ${name} not found`);
    return room;
  };
  const participantFor = (claims: ClaimGrants, roomName: string, identity: string) => {
    const room = roomFor(claims, roomName);
    const participant = room.participant(identity);
    if (!participant) throw new TwirpError('not_found', `participant ${identity} not found`);
    return { room, participant };
  };

  return {
    CreateRoom: twirpMethod(CreateRoomRequest, (req, claims) => {
      if (!claims.video?.roomCreate) throw permissionDenied('roomCreate');
      if (!req.name) throw new TwirpError('invalid_argument', 'room name is required');
      const config = new RoomConfiguration({
        name: req.name,
        emptyTimeout: req.emptyTimeout,
        departureTimeout: req.departureTimeout,
        maxParticipants: req.maxParticipants,
        metadata: req.metadata,
        agents: req.agents,
      });
      const existing = rooms.get(req.name);
      if (existing) {
        rooms.configure(existing, config);
        return existing.toInfo();
      }
      return rooms.getOrCreate(req.name, { by: 'api', config }).toInfo();
    }),

    ListRooms: twirpMethod(ListRoomsRequest, (req, claims) => {
      if (!claims.video?.roomList) throw permissionDenied('roomList');
      const wanted = new Set(req.names);
      const list = rooms.list().filter((room) => wanted.size === 0 || wanted.has(room.name));
      return new ListRoomsResponse({ rooms: list.map((room) => room.toInfo()) });
    }),

    DeleteRoom: twirpMethod(DeleteRoomRequest, (req, claims) => {
      if (!claims.video?.roomCreate) throw permissionDenied('roomCreate');
      if (!rooms.close(req.room, DisconnectReason.ROOM_DELETED)) {
        throw new TwirpError('not_found', `room ${req.room} not found`);
      }
      return new DeleteRoomResponse();
    }),

    ListParticipants: twirpMethod(ListParticipantsRequest, (req, claims) => {
      const room = roomFor(claims, req.room);
      return new ListParticipantsResponse({
        participants: [...room.participants.values()].map((p) => p.toInfo()),
      });
    }),

    GetParticipant: twirpMethod(RoomParticipantIdentity, (req, claims) => {
      return participantFor(claims, req.room, req.identity).participant.toInfo();
    }),

    RemoveParticipant: twirpMethod(RoomParticipantIdentity, (req, claims) => {
      const { room, participant } = participantFor(claims, req.room, req.identity);
      room.remove(participant, DisconnectReason.PARTICIPANT_REMOVED);
      return new RemoveParticipantResponse();
    }),

    MutePublishedTrack: twirpMethod(MuteRoomTrackRequest, (req, claims) => {
      const { room, participant } = participantFor(claims, req.room, req.identity);
      if (!req.muted) {
        throw new TwirpError('failed_precondition', 'remote unmute is not enabled');
      }
      if (!participant.tracks.has(req.trackSid)) {
        throw new TwirpError('not_found', `track ${req.trackSid} not found`);
      }
      // Tell the SDK so its local track mutes too; it confirms with its own MuteTrackRequest.
      participant.send({
        case: 'mute',
        value: new MuteTrackRequest({ sid: req.trackSid, muted: true }),
      });
      const track = room.setTrackMuted(participant, req.trackSid, true);
      return new MuteRoomTrackResponse({ track: track?.info });
    }),

    UpdateParticipant: twirpMethod(UpdateParticipantRequest, (req, claims) => {
      const { room, participant } = participantFor(claims, req.room, req.identity);
      room.updateParticipant(participant, {
        name: req.name || undefined,
        metadata: req.metadata || undefined,
        attributes: req.attributes,
        permission: req.permission,
      });
      return participant.toInfo();
    }),

    UpdateSubscriptions: twirpMethod(UpdateSubscriptionsRequest, (req, claims) => {
      const { room, participant } = participantFor(claims, req.room, req.identity);
      const trackSids = [...req.trackSids, ...req.participantTracks.flatMap((p) => p.trackSids)];
      room.updateSubscriptions(participant, trackSids, req.subscribe);
      return new UpdateSubscriptionsResponse();
    }),

    SendData: twirpMethod(SendDataRequest, (req, claims) => {
      const room = roomFor(claims, req.room);
      const packet = new DataPacket({
        kind: req.kind,
        destinationIdentities: req.destinationIdentities,
        value: {
          case: 'user',
          value: new UserPacket({
            payload: req.data,
            topic: req.topic,
            destinationSids: req.destinationSids,
            destinationIdentities: req.destinationIdentities,
            nonce: req.nonce,
          }),
        },
      });
      deliverData(packet, req.kind !== DataPacket_Kind.LOSSY, room.participants.values());
      return new SendDataResponse();
    }),

    UpdateRoomMetadata: twirpMethod(UpdateRoomMetadataRequest, (req, claims) => {
      const room = roomFor(claims, req.room);
      room.updateMetadata(req.metadata);
      return room.toInfo();
    }),
  };
}

function requireRoomAdmin(claims: ClaimGrants, room: string): void {
  if (!claims.video?.roomAdmin || claims.video.room !== room) {
    throw permissionDenied('roomAdmin');
  }
}

function permissionDenied(grant: string): TwirpError {
  return new TwirpError('permission_denied', `permissions denied: ${grant} not granted`);
}
