// SPDX-License-Identifier: GPL-3.0-or-later
import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import type { TtsOptions } from '../../src/media/tts/index.js';
import { createLogger } from '../../src/server/logger.js';

/** The service's logger keeps credentials out of its lines, however deep they are logged. */
function linesOf(write: (log: ReturnType<typeof createLogger>) => void): string {
  let out = '';
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out += chunk.toString();
      done();
    },
  });
  const log = createLogger({ destination });
  write(log);
  log.flush();
  return out;
}

it("blanks the TTS providers' API keys in logged options, at any depth options travel", () => {
  const tts: TtsOptions = {
    defaultEngine: 'elevenlabs',
    elevenlabs: { apiKey: 'sk-eleven-secret' },
    cartesia: { apiKey: 'sk-cartesia-secret', modelId: 'sonic-2' },
  };
  const out = linesOf((log) => {
    log.info({ tts }, 'options');
    log.info({ init: { index: 0, tts } }, 'a media process starts');
    log.info({ settings: { media: { tts } } }, 'deeper');
    log.info({ apiKey: 'sk-top-secret' }, 'top level');
  });
  expect(out).not.toMatch(/sk-[a-z]+-secret/);
  expect(out.match(/\[redacted\]/g)?.length).toBe(7);
  expect(out).toContain('sonic-2'); // the rest of the options stay readable
});

it('blanks tokens and secrets as before', () => {
  const out = linesOf((log) => log.info({ token: 'tok-1', key: { secret: 'sec-1' } }, 'x'));
  expect(out).not.toContain('tok-1');
  expect(out).not.toContain('sec-1');
});
