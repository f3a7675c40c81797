// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { AssetError } from '../../src/server/assets/assetError.js';
import { apiErrorOf } from '../../src/server/http/apiError.js';
import { errorReply, resultOf } from '../../src/server/sessions/routing/sessionCommand.js';
import {
  AvatarNotFoundError,
  CapacityRefusedError,
  RemoteSessionError,
  RoomNotAvailableError,
  SessionEndedError,
  SessionError,
  SessionWaitingError,
} from '../../src/server/sessions/sessionErrors.js';

/** What the error envelope and the headers of an answer are made of. */
const answer = (err: SessionError | AssetError) => {
  const e = apiErrorOf(err);
  return { status: e.status, type: e.type, code: e.code, message: e.message, ...e.options };
};

describe('the session domain errors at the HTTP edge', () => {
  it('keeps code, message and param, with the status and type of the error table', () => {
    expect(answer(new AvatarNotFoundError('av_x'))).toEqual({
      status: 404,
      type: 'not_found',
      code: 'avatar_not_found',
      message: 'No avatar `av_x`.',
      param: 'avatar_id',
    });
    expect(answer(new SessionEndedError('ses_1'))).toEqual({
      status: 409,
      type: 'conflict',
      code: 'session_ended',
      message: 'Session `ses_1` has ended.',
    });
    expect(answer(new RoomNotAvailableError())).toMatchObject({
      status: 409,
      code: 'room_not_available',
      param: 'room_name',
    });
  });

  it('answers a refusal over a cap with Retry-After and the count that refused it', () => {
    expect(answer(new CapacityRefusedError('concurrency_cap', 1, 1))).toEqual({
      status: 429,
      type: 'rate_limit',
      code: 'concurrency_cap',
      message: 'This key is at its cap of 1 concurrent session; end one or wait.',
      headers: {
        'retry-after': '10',
        'x-service-concurrent-sessions': '1',
        'x-service-max-concurrent-sessions': '1',
      },
    });
    expect(answer(new CapacityRefusedError('concurrency_cap', 3, 3, 2))).toMatchObject({
      message:
        'This key is at its cap of 3 concurrent sessions, 2 of them being created now; end one or wait.',
      headers: { 'x-service-concurrent-sessions': '3' },
    });
    expect(answer(new CapacityRefusedError('platform_busy', 8, 8))).toMatchObject({
      code: 'platform_busy',
      message: 'The platform is at capacity; retry shortly.',
      headers: { 'x-service-concurrent-sessions': '8' },
    });
  });
});

describe('the errors of the asset side at the HTTP edge', () => {
  it('keep code, message and param; a busy builder says when to retry', () => {
    expect(
      answer(new AssetError('url_not_allowed', 'The url points to a non-public address.', 'url')),
    ).toEqual({
      status: 400,
      type: 'invalid_request',
      code: 'url_not_allowed',
      message: 'The url points to a non-public address.',
      param: 'url',
    });
    expect(
      answer(
        new AssetError(
          'platform_busy',
          'The avatar builder is busy; retry shortly.',
          undefined,
          10,
        ),
      ),
    ).toEqual({
      status: 429,
      type: 'rate_limit',
      code: 'platform_busy',
      message: 'The avatar builder is busy; retry shortly.',
      headers: { 'retry-after': '10' },
    });
  });

  it('cross nodes with their code (an /audio payload that does not decode)', () => {
    const sent = new AssetError('unreadable_audio', 'The audio could not be decoded.');
    expect(errorReply(sent).error).toEqual({
      code: 'unreadable_audio',
      message: 'The audio could not be decoded.',
      param: undefined,
    });
  });
});

describe('the session domain errors between nodes', () => {
  it('come back from the node that runs the session as they left it', () => {
    const sent = new SessionWaitingError();
    let thrown: unknown;
    try {
      resultOf(JSON.parse(JSON.stringify(errorReply(sent))), () => new SessionEndedError('ses_1'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(RemoteSessionError);
    expect(answer(thrown as SessionError)).toEqual(answer(sent));
  });

  it('say `internal` for a fault of the other node, and the lost node is the caller’s error', () => {
    expect(errorReply(new Error('boom')).error.code).toBe('internal');
    expect(() =>
      resultOf({ error: { code: 'node_lost', message: '' } }, () => new SessionEndedError('s')),
    ).toThrow(SessionEndedError);
  });
});
