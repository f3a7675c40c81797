// SPDX-License-Identifier: GPL-3.0-or-later
import {
  ENDPOINTS,
  ttsEngineSchema,
  type Avatar,
  type FileObject,
  type Session,
  type Voice,
} from '@visage-avatar/client/api';
import type { StockVoice } from '../../media/avatarCatalogue.js';
import type { AvatarRecord, FileRecord, SessionRecord, VoiceRecord } from '../store/store.js';

/** Records as the wire contract shows them. */

/** Stock voices and avatars ship with the product; their creation time is the catalogue's epoch. */
export const CATALOGUE_EPOCH = '2026-01-01T00:00:00.000Z';

export function fileToWire(f: FileRecord): FileObject {
  return {
    file_id: f.id,
    filename: f.filename,
    content_type: f.contentType,
    bytes: f.bytes,
    duration_ms: f.durationMs,
    created_at: f.createdAt.toISOString(),
  };
}

export function voiceToWire(v: VoiceRecord): Voice {
  return {
    voice_id: v.id,
    name: v.name,
    status: 'ready',
    source: 'clone',
    engine: ttsEngineSchema.parse(v.engine),
    created_at: v.createdAt.toISOString(),
  };
}

export function stockVoiceToWire(v: StockVoice): Voice {
  return {
    voice_id: v.voiceId,
    name: v.name,
    status: 'ready',
    source: 'stock',
    // Catalogue voices are designed espeak voices.
    engine: 'espeak',
    created_at: CATALOGUE_EPOCH,
  };
}

export function avatarToWire(a: AvatarRecord): Avatar {
  return {
    avatar_id: a.id,
    name: a.name,
    ...(a.description !== null ? { description: a.description } : {}),
    source: a.source,
    status: 'ready',
    default_voice_id: a.defaultVoiceId,
    preview_url: ENDPOINTS.getAvatarPreview.path.replace('{id}', a.id),
    created_at: a.createdAt.toISOString(),
  };
}

export function sessionToWire(s: SessionRecord): Session {
  return {
    session_id: s.id,
    status: s.status,
    avatar_id: s.avatarId,
    voice_id: s.voiceId,
    mode: s.mode,
    transport: s.transport,
    livekit_url: s.livekitUrl,
    room_name: s.roomName,
    agent_identity: s.agentIdentity,
    publish_on_behalf: s.publishOnBehalf,
    idle_timeout_seconds: s.idleTimeoutSeconds,
    max_duration_seconds: s.maxDurationSeconds,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    ended_at: s.endedAt?.toISOString() ?? null,
    end_reason: s.endReason,
  };
}
