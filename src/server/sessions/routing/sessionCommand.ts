// SPDX-License-Identifier: GPL-3.0-or-later
import { ERROR_CODES, type EndReason, type ErrorCode } from '@visage-avatar/client/api';
import type { AvatarFaceSpec, TimedAtlasUrl } from '../../../media/mediaCore.js';
import { AssetError } from '../../assets/assetError.js';
import { DatabaseUnavailableError } from '../../store/databaseUnavailable.js';
import { RemoteSessionError, SessionError } from '../sessionErrors.js';

/**
 * What a node asks of a session, in a form that can be stored and applied by the node that
 * runs it (cluster.ts hands these over through PostgreSQL): the driving calls, the start of a
 * session placed on another node, and its end.
 */
export type DrivingCommand =
  | { kind: 'speak'; text: string }
  /** Audio as received (decoded by the node that plays it). */
  | { kind: 'audio'; bytes: Uint8Array; contentType: string | null; text: string | null }
  | { kind: 'interrupt' }
  | { kind: 'waiting'; waiting: boolean };

export interface StartCommand {
  kind: 'start';
  /** What the avatar shows: a stock design, or a photo avatar's build (read from the files). */
  face: AvatarFaceSpec;
  /** The voice's engine and what it stored (the voice may be deleted meanwhile). */
  voice: { engine: string; profile: unknown };
  /** The LiveKit the caller brought, with the avatar's token; null: the service's own. */
  callerLiveKit: { url: string; token: string } | null;
  /** Visage named the room for this session alone: it is deleted when the session ends. */
  ownsRoom: boolean;
  /** `client` mode: the signed URLs of the avatar's atlas, for the face stream (mediaCore.ts). */
  atlasUrls?: readonly TimedAtlasUrl[];
}

export interface EndCommand {
  kind: 'end';
  reason: EndReason;
}

export type SessionCommand = DrivingCommand | StartCommand | EndCommand;

/** The results of driving calls, as they travel between nodes (JSON). */
export interface UtteranceQueued {
  utterance_id: string;
}
export interface Interrupted {
  interrupted: boolean;
  dropped_utterances: number;
}

/** The answer to a command: its result, or the error (code of the API's table) it ended with. */
export type CommandReply =
  { ok: unknown } | { error: { code: string; message: string; param?: string } };

/** The stored form: `kind`, JSON `body`, and the audio bytes beside it. */
export function commandRow(c: SessionCommand): {
  kind: string;
  body: unknown;
  bytes: Uint8Array | null;
} {
  if (c.kind === 'audio') {
    const { bytes, ...body } = c;
    return { kind: c.kind, body, bytes };
  }
  return { kind: c.kind, body: c, bytes: null };
}

export function commandFromRow(row: {
  kind: string;
  body: unknown;
  bytes: Uint8Array | null;
}): SessionCommand {
  const body = row.body as Record<string, unknown>;
  switch (row.kind) {
    case 'audio':
      return {
        ...(body as Omit<Extract<DrivingCommand, { kind: 'audio' }>, 'bytes'>),
        bytes: row.bytes ?? new Uint8Array(),
      };
    case 'speak':
    case 'interrupt':
    case 'waiting':
    case 'start':
    case 'end':
      return body as unknown as SessionCommand;
    default:
      throw new Error(`unknown session command ${row.kind}`);
  }
}

/**
 * A failure as a reply: the session domain's errors keep their code, and so do the asset side's
 * (an /audio payload that does not decode, assets/voiceClip.ts); the node's database being
 * away is `database_unavailable` (as that node would answer it), anything else is `internal`.
 */
export function errorReply(err: unknown): Extract<CommandReply, { error: unknown }> {
  if (err instanceof SessionError) {
    return { error: { code: err.code, message: err.message, param: err.param } };
  }
  if (err instanceof AssetError) {
    return { error: { code: err.code, message: err.message, param: err.param } };
  }
  if (err instanceof DatabaseUnavailableError) {
    return {
      error: {
        code: 'database_unavailable',
        message: `The database is ${err.reason} for the node that runs the session; retry shortly.`,
      },
    };
  }
  return {
    error: { code: 'internal', message: 'Internal error on the node that runs the session.' },
  };
}

/**
 * The result a reply carries, or its error thrown as a RemoteSessionError of the same code,
 * message and param. `lost` is the error for a reply that says the node running the session was
 * lost (the sweep answered for it).
 */
export function resultOf(reply: unknown, lost: () => SessionError): unknown {
  const r = reply as CommandReply;
  if (r && 'ok' in r) return r.ok;
  const error = r && 'error' in r ? r.error : undefined;
  if (!error) throw new RemoteSessionError('internal', 'An unreadable answer from another node.');
  if (error.code === 'node_lost') throw lost();
  const code = (error.code in ERROR_CODES ? error.code : 'internal') as ErrorCode;
  throw new RemoteSessionError(code, error.message, error.param);
}
