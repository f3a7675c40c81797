// SPDX-License-Identifier: GPL-3.0-or-later
import type { ErrorCode } from '@visage-avatar/client/api';

/**
 * What the session domain refuses, as typed errors. Each names its code of the API's error
 * table (errors.ts of the wire contract, @visage-avatar/client/api) and says why in the words the
 * caller reads; the HTTP edge (`apiErrorOf` in http/apiError.ts) gives it its status, type and
 * headers, and the cluster hands it between nodes as code, message and param
 * (routing/sessionCommand.ts).
 */
export class SessionError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param?: string,
  ) {
    super(message);
    this.name = 'SessionError';
  }
}

/** No session of this id for this key (another key's session is not found either). */
export class SessionNotFoundError extends SessionError {
  constructor(id: string) {
    super('session_not_found', `No session \`${id}\`.`);
    this.name = 'SessionNotFoundError';
  }
}

export class SessionEndedError extends SessionError {
  constructor(id: string) {
    super('session_ended', `Session \`${id}\` has ended.`);
    this.name = 'SessionEndedError';
  }
}

/** Speech on a parked session (waiting_state). */
export class SessionWaitingError extends SessionError {
  constructor() {
    super(
      'session_waiting',
      'The session is parked: resume it with waiting_state {"waiting": false} first.',
    );
    this.name = 'SessionWaitingError';
  }
}

export class AvatarNotFoundError extends SessionError {
  constructor(avatarId: string) {
    super('avatar_not_found', `No avatar \`${avatarId}\`.`, 'avatar_id');
    this.name = 'AvatarNotFoundError';
  }
}

export class VoiceNotFoundError extends SessionError {
  constructor(voiceId: string) {
    super('voice_not_found', `No voice \`${voiceId}\`.`, 'voice_id');
    this.name = 'VoiceNotFoundError';
  }
}

/** A create whose fields contradict each other (each passed the request's schema alone). */
export class InvalidSessionRequestError extends SessionError {
  constructor(message: string, param: string) {
    super('validation_failed', message, param);
    this.name = 'InvalidSessionRequestError';
  }
}

/** The LiveKit a caller brings (`livekit: { url, token }`) cannot be used. */
export class CallerLiveKitError extends SessionError {
  constructor(
    code: 'invalid_livekit_token' | 'url_not_allowed' | 'url_unreachable',
    message: string,
    param: string,
  ) {
    super(code, message, param);
    this.name = 'CallerLiveKitError';
  }
}

/**
 * A create over a cap: the key's (`concurrency_cap`) or the platform's (`platform_busy`), with
 * the count that refused it (the answer tells it, and when to retry).
 */
export class CapacityRefusedError extends SessionError {
  constructor(
    readonly refused: 'concurrency_cap' | 'platform_busy',
    /** Live sessions, as counted when the create was refused (those being created included). */
    readonly active: number,
    readonly cap: number,
    /** Of `active`, the key's creates still under way on this node (createAdmission.ts). */
    readonly starting = 0,
  ) {
    super(
      refused,
      refused === 'concurrency_cap'
        ? `This key is at its cap of ${cap} concurrent ${cap === 1 ? 'session' : 'sessions'}${
            starting > 0 ? `, ${starting} of them being created now` : ''
          }; end one or wait.`
        : 'The platform is at capacity; retry shortly.',
    );
    this.name = 'CapacityRefusedError';
  }
}

/** The room is another key's; whose it is stays unsaid. */
export class RoomNotAvailableError extends SessionError {
  constructor() {
    super(
      'room_not_available',
      'This room is in use by another account; choose another `room_name`.',
      'room_name',
    );
    this.name = 'RoomNotAvailableError';
  }
}

/**
 * The session's media cannot be had now (`media_unavailable`): it could not start in time, its
 * node went away or did not answer, or it is not running where the database says it is.
 */
export class SessionUnavailableError extends SessionError {
  constructor(message: string) {
    super('media_unavailable', message);
    this.name = 'SessionUnavailableError';
  }
}

/** The session's room is on a LiveKit the caller brought: its tokens are minted there. */
export class ParticipantTokenUnavailableError extends SessionError {
  constructor() {
    super(
      'participant_token_unavailable',
      "This session's room is on the LiveKit the caller brought; mint its tokens there.",
    );
    this.name = 'ParticipantTokenUnavailableError';
  }
}

/** An audio payload longer than the limit (decoding stops at it). */
export class AudioTooLongError extends SessionError {
  constructor(limitMs: number) {
    super('clip_too_long', `Audio payloads are limited to ${limitMs / 1000} s; split it.`);
    this.name = 'AudioTooLongError';
  }
}

/**
 * The error another node answered a handed-over call with, as it came (code, message, param):
 * that node's refusal, or its database being away, or a fault of its own (`internal`).
 */
export class RemoteSessionError extends SessionError {
  constructor(code: ErrorCode, message: string, param?: string) {
    super(code, message, param);
    this.name = 'RemoteSessionError';
  }
}
