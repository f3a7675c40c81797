// SPDX-License-Identifier: GPL-3.0-or-later
// WebRTC tests need a non-loopback address: libwebrtc gathers no ICE candidates on loopback.
// `npm test` (test/run.js) creates an isolated network namespace and passes its address in
// VISAGE_TEST_ADDRESS. Test files call `webrtcAddress()` and wrap their suites in
// `describeWebRtc`, so that outside the namespace they fail, saying why and how to run them.
import { networkInterfaces } from 'node:os';
import { describe, it } from 'vitest';

const unavailable = process.env.VISAGE_TEST_NETNS_UNAVAILABLE;

/** The namespace's address, or undefined when these tests cannot run here. */
export function webrtcAddress(): string | undefined {
  const address = process.env.VISAGE_TEST_ADDRESS;
  if (!address) return undefined;
  const present = Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((entry) => entry.address === address),
  );
  return present ? address : undefined;
}

function whyUnavailable(): string {
  return (
    unavailable ??
    'not inside the test network namespace (run `npm test` as root, or ' +
      '`ip netns exec <ns> npx vitest` with VISAGE_TEST_ADDRESS set)'
  );
}

/**
 * `describe` for suites that need real WebRTC. Without the namespace the suite fails, saying why
 * and how to run it: a skipped suite would be a hole no one sees.
 */
export function describeWebRtc(name: string, body: (address: string) => void): void {
  const address = webrtcAddress();
  if (address) {
    describe(name, () => body(address));
    return;
  }
  const reason = whyUnavailable();
  describe(name, () => {
    it('needs the WebRTC test network namespace', () => {
      throw new Error(`WebRTC tests cannot run: ${reason}`);
    });
  });
}
