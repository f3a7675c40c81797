// SPDX-License-Identifier: GPL-3.0-or-later
import {
  DisconnectReason,
  Pong,
  RequestResponse,
  RequestResponse_Reason,
  SessionDescription,
  SignalTarget,
  type SignalRequest,
} from '@livekit/protocol';
import type { Participant } from '../rtc/participant.js';
import type { Room } from '../rtc/room.js';
import { announceTrack } from '../rtc/trackPublication.js';

export interface SignalHandlerHooks {
  /** The client asked to simulate a signal loss (SimulateScenario), or a test did. */
  dropSignal(): void;
}

/** Applies one SignalRequest from a participant's SDK. */
export async function handleSignalRequest(
  room: Room,
  participant: Participant,
  request: SignalRequest,
  hooks: SignalHandlerHooks,
): Promise<void> {
  const { message } = request;
  switch (message.case) {
    case 'offer': {
      if (!participant.publisher) return;
      const sdp = await participant.publisher.handleOffer(message.value.sdp);
      participant.send({
        case: 'answer',
        value: new SessionDescription({ type: 'answer', sdp, id: message.value.id }),
      });
      return;
    }
    case 'answer':
      await participant.subscriber?.handleAnswer(message.value.sdp);
      return;
    case 'trickle': {
      const peer =
        message.value.target === SignalTarget.SUBSCRIBER
          ? participant.subscriber
          : participant.publisher;
      if (message.value.candidateInit) await peer?.addCandidate(message.value.candidateInit);
      return;
    }
    case 'addTrack': {
      const published = announceTrack(participant, message.value);
      if (published) participant.send({ case: 'trackPublished', value: published });
      return;
    }
    case 'mute':
      room.setTrackMuted(participant, message.value.sid, message.value.muted);
      return;
    case 'subscription': {
      const trackSids = [
        ...message.value.trackSids,
        ...message.value.participantTracks.flatMap((p) => p.trackSids),
      ];
      room.updateSubscriptions(participant, trackSids, message.value.subscribe);
      return;
    }
    case 'leave':
      room.remove(participant, DisconnectReason.CLIENT_INITIATED);
      return;
    case 'ping':
      participant.send({ case: 'pong', value: BigInt(Date.now()) });
      return;
    case 'pingReq':
      participant.send({
        case: 'pongResp',
        value: new Pong({
          lastPingTimestamp: message.value.timestamp,
          timestamp: BigInt(Date.now()),
        }),
      });
      return;
    case 'updateMetadata': {
      const { name, metadata, attributes, requestId } = message.value;
      const allowed = participant.permission.canUpdateMetadata;
      if (allowed) {
        room.updateParticipant(participant, {
          name: name || undefined,
          metadata: metadata || undefined,
          attributes,
        });
      }
      participant.send({
        case: 'requestResponse',
        value: new RequestResponse({
          requestId,
          reason: allowed ? RequestResponse_Reason.OK : RequestResponse_Reason.NOT_ALLOWED,
          message: allowed ? '' : 'does not have permission to update own metadata',
        }),
      });
      return;
    }
    case 'simulate':
      if (message.value.scenario.case === 'serverLeave') {
        room.remove(participant, DisconnectReason.SERVER_SHUTDOWN);
      } else if (
        message.value.scenario.case === 'nodeFailure' ||
        message.value.scenario.case === 'migration'
      ) {
        hooks.dropSignal();
      }
      return;
    // Accepted and ignored: layer/quality control (no simulcast selection), subscription
    // permissions (everyone may subscribe to everything), sync state (no resume).
    case 'trackSetting':
    case 'updateLayers':
    case 'subscriptionPermission':
    case 'syncState':
    case 'updateAudioTrack':
    case 'updateVideoTrack':
    case undefined:
      return;
  }
}
