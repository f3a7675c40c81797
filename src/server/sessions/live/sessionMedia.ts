// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import {
  MediaJoinRefusedError,
  MediaUnavailableError,
  type MediaCore,
  type MediaEndReason,
  type MediaSession,
  type MediaSessionSpec,
} from '../../../media/mediaCore.js';
import type { Limits } from '../../config.js';
import type { SessionRecord } from '../../store/store.js';
import type { StartCommand } from '../routing/sessionCommand.js';
import { CallerLiveKitError, SessionUnavailableError } from '../sessionErrors.js';
import { StageTimeoutError, withinDeadline } from '../stageTimeout.js';

/**
 * How long a create waits for the media processes of a node still starting them: a first start
 * on a busy 2-core machine draws the avatars for 15 to 30 s; only a hung start takes longer.
 */
const MEDIA_WORKERS_START_MS = 60_000;
/** Seconds a room may outlast its session's maximum length before the LiveKit server closes it. */
const ROOM_TIMEOUT_MARGIN_SECONDS = 60;
/**
 * After a media start overran its bound, the create still waits up to this share of the bound
 * for that start to come up and be torn down before it answers 503: a client that retries at
 * once with the same avatar identity must not find the abandoned avatar joining the room.
 */
const LATE_MEDIA_GRACE_SHARE = 0.5;

/**
 * The longest a session's media start can take on its node: the wait for the node's media
 * processes, the avatar's start and the grace after it. A node that hands a session to another
 * waits this long for its answer (sessionCreation.ts).
 */
export function mediaStartBoundMs(limits: Pick<Limits, 'createStageTimeoutMs'>): number {
  return MEDIA_WORKERS_START_MS + limits.createStageTimeoutMs * (1 + LATE_MEDIA_GRACE_SHARE);
}

export interface SessionMediaOptions {
  media: MediaCore;
  limits: Limits;
  log: Logger;
}

/** What the start tells the live session, and asks of it. */
export interface SessionMediaHooks {
  speakingChanged(): void;
  /** The media ended the session itself (the room went away, the agent left…). */
  ended(reason: MediaEndReason, detail: string): void;
  /** The start failed: the session is ended (its slot freed) before the create answers. */
  failed(): Promise<void>;
  /** Whether the session was ended while its media was starting. */
  isEnding(): boolean;
}

/**
 * Starts a session's media within its bound. The create path owns what it started: media that
 * comes up after the session ended (deleted, timed out, the room gone) is torn down here.
 */
export async function startSessionMedia(
  o: SessionMediaOptions,
  record: SessionRecord,
  start: Pick<StartCommand, 'face' | 'voice' | 'ownsRoom' | 'atlasUrls'> & {
    livekit: MediaSessionSpec['livekit'];
  },
  hooks: SessionMediaHooks,
): Promise<MediaSession> {
  const log = o.log.child({ session_id: record.id });
  let leftover: Promise<void> | undefined;
  const closeLeftover = (media: MediaSession) => {
    log.warn('media came up after its session ended; stopping it');
    leftover = media.close().catch((err: unknown) => log.error({ err }, 'media teardown failed'));
  };
  let media: MediaSession;
  let starting: Promise<MediaSession> | undefined;
  try {
    // A node listens while its media processes start: the wait for them (a stage of its own) is
    // not part of the avatar's start.
    if (o.media.whenStarted) {
      await withinDeadline(
        o.media.whenStarted(),
        MEDIA_WORKERS_START_MS,
        'waiting for the media processes to start',
        () => undefined,
      );
    }
    media = await withinDeadline(
      (starting = o.media.start(
        {
          sessionId: record.id,
          mode: record.mode,
          avatarId: record.avatarId,
          avatar: start.face,
          voiceId: record.voiceId,
          voiceEngine: start.voice.engine,
          voiceProfile: start.voice.profile,
          roomName: record.roomName,
          agentIdentity: record.agentIdentity,
          publishOnBehalf: record.publishOnBehalf,
          livekit: start.livekit,
          roomTimeoutSeconds: record.maxDurationSeconds + ROOM_TIMEOUT_MARGIN_SECONDS,
          ownsRoom: start.ownsRoom,
          ...(start.atlasUrls !== undefined ? { atlasUrls: start.atlasUrls } : {}),
        },
        { speakingChanged: hooks.speakingChanged, ended: hooks.ended },
      )),
      o.limits.createStageTimeoutMs,
      'starting the avatar',
      closeLeftover,
    );
  } catch (err) {
    log.error({ err }, 'media could not start; ending the session');
    await hooks.failed();
    if (err instanceof StageTimeoutError && starting) {
      const graceMs = o.limits.createStageTimeoutMs * LATE_MEDIA_GRACE_SHARE;
      await settleLateMedia(starting, () => leftover, graceMs, log);
    }
    if (record.callerLiveKit && err instanceof MediaJoinRefusedError) {
      throw new CallerLiveKitError(
        'invalid_livekit_token',
        'The LiveKit server at `livekit.url` refused `livekit.token`.',
        'livekit.token',
      );
    }
    if (err instanceof MediaUnavailableError || err instanceof StageTimeoutError) {
      throw new SessionUnavailableError(
        `The media service cannot take the session now: ${err.message}.`,
      );
    }
    throw err;
  }
  if (hooks.isEnding()) {
    closeLeftover(media);
    throw new SessionUnavailableError('The session ended while its media was starting.');
  }
  return media;
}

/**
 * Waits, at most `graceMs`, for a media start that overran its bound to come up and be torn down
 * (`teardown`, set by the deadline's late handler), or to fail. Past the grace the create answers
 * anyway; the late handler still stops the media whenever it comes up.
 */
async function settleLateMedia(
  starting: Promise<MediaSession>,
  teardown: () => Promise<void> | undefined,
  graceMs: number,
  log: Logger,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    starting
      .then(
        () => teardown(),
        () => undefined,
      )
      .then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!settled) log.warn({ grace_ms: graceMs }, 'the late media start has not settled; answering');
}
