// SPDX-License-Identifier: GPL-3.0-or-later
import {
  CreateAgentDispatchRequest,
  DeleteAgentDispatchRequest,
  ListAgentDispatchRequest,
  ListAgentDispatchResponse,
} from '@livekit/protocol';
import type { ClaimGrants } from 'livekit-server-sdk';
import type { RoomRegistry } from '../service/roomRegistry.js';
import { TwirpError } from '../service/twirp/twirpError.js';
import { twirpMethod, type TwirpService } from '../service/twirp/twirpServer.js';
import type { AgentDispatcher } from './dispatcher.js';

// livekit-server's limits on what a dispatch carries.
const MAX_METADATA_BYTES = 64 * 1024;

/**
 * `livekit.AgentDispatchService` (what livekit-server-sdk's AgentDispatchClient calls). Every
 * method needs a roomAdmin grant for the room. CreateDispatch creates the room when it does not
 * exist (which, as in livekit-server, also gives it the default unnamed dispatch).
 */
export function agentDispatchService(
  rooms: RoomRegistry,
  dispatcher: AgentDispatcher,
): TwirpService {
  return {
    CreateDispatch: twirpMethod(CreateAgentDispatchRequest, (req, claims) => {
      requireRoomAdmin(claims, req.room);
      if (!req.room) throw new TwirpError('invalid_argument', 'room is required');
      if (Buffer.byteLength(req.metadata) > MAX_METADATA_BYTES) {
        throw new TwirpError('invalid_argument', 'metadata is too large');
      }
      const room = rooms.getOrCreate(req.room, { by: 'api' });
      return dispatcher.add(room, { agentName: req.agentName, metadata: req.metadata });
    }),

    ListDispatch: twirpMethod(ListAgentDispatchRequest, (req, claims) => {
      requireRoomAdmin(claims, req.room);
      const room = rooms.get(req.room);
      if (!room) throw new TwirpError('not_found', `room ${req.room} not found`);
      return new ListAgentDispatchResponse({
        agentDispatches: dispatcher.list(room, req.dispatchId),
      });
    }),

    DeleteDispatch: twirpMethod(DeleteAgentDispatchRequest, async (req, claims) => {
      requireRoomAdmin(claims, req.room);
      const room = rooms.get(req.room);
      if (!room) throw new TwirpError('not_found', `room ${req.room} not found`);
      const deleted = await dispatcher.delete(room, req.dispatchId);
      if (!deleted) throw new TwirpError('not_found', `dispatch ${req.dispatchId} not found`);
      return deleted;
    }),
  };
}

function requireRoomAdmin(claims: ClaimGrants, room: string): void {
  if (!claims.video?.roomAdmin || claims.video.room !== room) {
    throw new TwirpError('permission_denied', 'permissions denied: roomAdmin not granted');
  }
}
