// SPDX-License-Identifier: GPL-3.0-or-later
// Churn must not leak: every ended media session, its rtc-node Room and its tracks must become
// garbage (their native handles, PeerConnections and encoders are freed with them). The bench's
// churn soak (`npm run bench -- churn`) measures the resident memory; this checks the cause.
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MediaSession } from '../../../src/media/mediaCore.js';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { describeWebRtc } from '../../support/network.js';
import { startMediaStack, type MediaStack } from './mediaStack.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describeWebRtc('ended sessions are released', (address) => {
  let stack: MediaStack;
  const started: { session: WeakRef<MediaSession>; room: WeakRef<object> }[] = [];

  beforeAll(async () => {
    stack = await startMediaStack(address, {
      wrapMedia: (core) => ({
        kind: core.kind,
        close: () => core.close(),
        running: () => core.running(),
        async start(spec, observer) {
          const session = await core.start(spec, observer);
          started.push({
            session: new WeakRef(session),
            room: new WeakRef(Reflect.get(session, 'room') as object),
          });
          return session;
        },
      }),
    });
  }, 60_000);

  afterAll(() => stack?.close());

  it('leaves no session, room or track reachable after create, speak, delete', async () => {
    const avatar = AVATAR_CATALOGUE[0]!.avatarId;
    for (let i = 0; i < 4; i++) {
      const { session_id, client } = await stack.session(avatar);
      const res = await stack.visage.call('POST', `/v1/sessions/${session_id}/speak`, {
        json: { text: `Session ${i} says hello.` },
      });
      const { utterance_id } = (await res.json()) as { utterance_id: string };
      await client.waitFor(
        () => client.finals().some((m) => m.utterance_id === utterance_id),
        20_000,
        'the sentence heard',
      );
      await stack.visage.call('DELETE', `/v1/sessions/${session_id}`);
      await client.leave();
    }
    expect(started).toHaveLength(4);
    // Collected once their closing work is done; give timers and native callbacks a moment.
    const alive = () => started.filter((s) => s.session.deref() ?? s.room.deref()).length;
    const until = Date.now() + 20_000;
    while (alive() > 0 && Date.now() < until) {
      await sleep(500);
      gc();
    }
    expect(alive(), 'media sessions or rooms still reachable after they ended').toBe(0);
  }, 120_000);
});
