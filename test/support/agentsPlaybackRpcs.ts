// SPDX-License-Identifier: GPL-3.0-or-later
import { voice } from '@livekit/agents';

/**
 * Makes agents-js's next `DataStreamAudioOutput` register its playback RPCs on its own room.
 *
 * agents-js registers `lk.playback_finished` and `lk.playback_started` once per process, on the
 * room of the first output made (an agent's job process has one room). A test process makes a
 * room per test, and vitest retries a failed test in the same process: without this, every room
 * after the first never hears `lk.playback_finished` (stop 53's CI run: the retry of a test that
 * had failed on a bound timed out waiting for it).
 */
export function forgetPlaybackRpcs(): void {
  voice.DataStreamAudioOutput._playbackFinishedRpcRegistered = false;
  voice.DataStreamAudioOutput._playbackStartedRpcRegistered = false;
}
