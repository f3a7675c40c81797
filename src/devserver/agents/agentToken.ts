// SPDX-License-Identifier: GPL-3.0-or-later
import type { AvailabilityResponse, ParticipantPermission } from '@livekit/protocol';
import { AccessToken } from 'livekit-server-sdk';
import type { WorkerCredentials } from './agentWorker.js';

/** livekit-server stamps the worker's agent name on every agent participant under this key. */
export const AGENT_NAME_ATTRIBUTE = 'lk.agent_name';

/**
 * The room token a job's agent joins with (livekit-server's `BuildAgentToken`): kind AGENT, the
 * worker's allowed permissions as grants, identity/name/metadata/attributes from the worker's
 * availability answer, signed with the key the worker authenticated with, valid for an hour.
 */
export function buildAgentToken(
  credentials: WorkerCredentials,
  room: string,
  agentName: string,
  answer: AvailabilityResponse,
  permissions: ParticipantPermission,
): Promise<string> {
  const at = new AccessToken(credentials.apiKey, credentials.apiSecret, {
    identity: answer.participantIdentity,
    name: answer.participantName,
    metadata: answer.participantMetadata,
    attributes: { ...answer.participantAttributes, [AGENT_NAME_ATTRIBUTE]: agentName },
    ttl: '1h',
  });
  at.kind = 'agent';
  at.addGrant({
    roomJoin: true,
    agent: true,
    room,
    canSubscribe: permissions.canSubscribe,
    canPublish: permissions.canPublish,
    canPublishData: permissions.canPublishData,
    hidden: permissions.hidden,
    canUpdateOwnMetadata: permissions.canUpdateMetadata,
    canSubscribeMetrics: permissions.canSubscribeMetrics,
  });
  return at.toJwt();
}
