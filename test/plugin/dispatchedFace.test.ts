// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { dispatchedFace } from '../../packages/livekit-plugin/src/dispatchedFace.js';

// The face a room's creator asks for in the agent's dispatch metadata (the playground's "Face"
// control): AvatarSession takes it when its own `face` option is not set. The playground test
// (test/cli/playground.slow.test.ts) runs it end to end with the example worker, which sets none.
describe("the face asked in the job's dispatch metadata", () => {
  it("reads the playground's ask", () => {
    expect(dispatchedFace('{"face":"client"}')).toBe('client');
    expect(dispatchedFace('{"face":"video","other":1}')).toBe('video');
  });

  it('asks nothing for any other metadata, without an error (the agent may use its own)', () => {
    for (const metadata of [
      undefined,
      '',
      'client',
      'not json {',
      'null',
      '"client"',
      '["client"]',
      '{}',
      '{"face":"canvas"}',
      '{"face":true}',
      `{"face":"client","pad":"${'x'.repeat(5000)}"}`,
    ]) {
      expect(dispatchedFace(metadata), String(metadata).slice(0, 40)).toBeUndefined();
    }
  });
});
