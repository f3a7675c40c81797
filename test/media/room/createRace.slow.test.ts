// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { describeWebRtc } from '../../support/network.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

/** A DELETE sent while the avatar is still joining its room must not leave it running. */
describeWebRtc('a DELETE racing the create, with real avatars', (address) => {
  let stack: MediaStack;
  afterAll(() => stack?.close());

  it('leaves no avatar in any room and nothing running in the media core', async () => {
    stack = await startMediaStack(address, { cap: 3 });
    const { visage, media, livekit } = stack;
    for (let attempt = 0; attempt < 3; attempt++) {
      const creating = visage.call('POST', '/v1/sessions', {
        json: { avatar_id: AVATAR_CATALOGUE[0]!.avatarId, mode: 'video' },
      });
      // The session is listed as soon as its row exists, before the avatar has joined.
      let id: string | undefined;
      while (!id) {
        const list = (await (await visage.call('GET', '/v1/sessions?status=active')).json()) as {
          data: { session_id: string }[];
        };
        id = list.data[0]?.session_id;
      }
      expect((await visage.call('DELETE', `/v1/sessions/${id}`)).status).toBe(204);
      const res = await creating;
      // Deleted before or after the avatar came up: either way nothing of it survives.
      expect([201, 503]).toContain(res.status);
      await expect.poll(() => media.running().size, { timeout: 15_000 }).toBe(0);
      await expect
        .poll(() => livekit.rooms.list().flatMap((r) => [...r.participants.keys()]), {
          timeout: 15_000,
        })
        .toEqual([]);
    }
  }, 120_000);
});
