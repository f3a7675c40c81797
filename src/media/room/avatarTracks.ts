// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import {
  LocalAudioTrack,
  LocalVideoTrack,
  TrackPublishOptions,
  TrackSource,
  type AudioSource,
  type LocalParticipant,
  type LocalTrackPublication,
  type VideoSource,
} from '@livekit/rtc-node';
import type { RoomServiceClient } from 'livekit-server-sdk';
import type { MediaSessionSpec } from '../mediaCore.js';
import { rtcVideoCodec, type AvatarVideoCodec } from './avatarVideoCodec.js';
import { withTimeout } from './withTimeout.js';

/** An avatar's two tracks: publishing them, and checking that the server received them. */

const VIDEO_MAX_BITRATE = 1_200_000n;

export interface AvatarTrackOptions {
  /** None in client mode: the audio alone is published. */
  videoSource: VideoSource | undefined;
  audioSource: AudioSource;
  videoCodec: AvatarVideoCodec;
  /** The renderer's frame rate while active. */
  maxFramerate: number;
  /** Bound on each publish. */
  stageTimeoutMs: number;
}

/**
 * Publishes the avatar's video and audio tracks, both at once. Published one after the other, on
 * a busy machine the video's renegotiation could be lost behind the audio's: the video then never
 * reached the room (seen with the embedded server). The video is asked for first: with fast
 * publish, rtc-node offers each track as the server accepts it, and a viewer already in the room
 * gets the first one a round trip sooner (a viewer's first frame came about 20 ms sooner, median
 * of 7); the audio is needed only from the first speech.
 */
export async function publishAvatarTracks(
  local: LocalParticipant,
  o: AvatarTrackOptions,
): Promise<{ video: LocalTrackPublication | undefined; audio: LocalTrackPublication }> {
  const [video, audio] = await Promise.all([
    o.videoSource &&
      withTimeout(
        local.publishTrack(
          LocalVideoTrack.createVideoTrack('avatar-video', o.videoSource),
          new TrackPublishOptions({
            source: TrackSource.SOURCE_CAMERA,
            simulcast: false,
            videoCodec: rtcVideoCodec(o.videoCodec),
            videoEncoding: { maxBitrate: VIDEO_MAX_BITRATE, maxFramerate: o.maxFramerate },
          }),
        ),
        o.stageTimeoutMs,
        'publishing the video track timed out',
      ),
    withTimeout(
      local.publishTrack(
        LocalAudioTrack.createAudioTrack('avatar-audio', o.audioSource),
        new TrackPublishOptions({
          source: TrackSource.SOURCE_MICROPHONE,
          // DTX: while the avatar is silent (most of a session, and all of an unwatched one)
          // Opus sends a frame every 400 ms instead of 50 a second (issue 47). The server
          // turns it on in its answer; the first frame of speech is sent as without it.
          dtx: true,
          red: false,
        }),
      ),
      o.stageTimeoutMs,
      'publishing the audio track timed out',
    ),
  ]);
  return { video, audio };
}

/** How long the server may take to negotiate a published track before the start gives up. */
const TRACK_ARRIVAL_MS = 5_000;
/**
 * How often the start asks the server for the tracks it lists: first after 20 ms (each wait is
 * time the create's answer may sit idle after the tracks arrived; 50 ms cost 25 ms at the
 * median), then half as long again each time, to at most 250 ms, so that a track that never
 * comes costs the server about 25 requests rather than 250.
 */
const TRACK_POLL_FIRST_MS = 20;
const TRACK_POLL_MAX_MS = 250;

/**
 * The tracks among `sids` that the server still does not list for the avatar after a while
 * (none when the server cannot be asked). rtc-node resolves a publication once the server
 * announced the track, before the track is negotiated; under load it was seen to never send the
 * offer for the second track (the server got the audio only, no error anywhere, and an agent
 * waited for the avatar's video for good). The likely cause is in its debounced negotiation
 * (rust-sdks' utils/debouncer.rs): a request that comes while the debounced offer is being made
 * is accepted and never acted on. Servers that grant fast publish (LiveKit's, and the embedded
 * one for agents) switch rtc-node to a queue that retries such a request after the answer;
 * others do not. Publishing it again on the same connection did not help (rtc-node then timed
 * out waiting for the server's answer it had been sent).
 */
export async function tracksNotReceived(
  server: RoomServiceClient,
  spec: MediaSessionSpec,
  sids: string[],
): Promise<string[]> {
  const deadline = performance.now() + TRACK_ARRIVAL_MS;
  let wait = TRACK_POLL_FIRST_MS;
  for (;;) {
    // A server that cannot be asked is not evidence of a lost track: nothing is published again.
    let info;
    try {
      info = await server.getParticipant(spec.roomName, spec.agentIdentity);
    } catch {
      return [];
    }
    const received = new Set(info.tracks.map((t) => t.sid));
    const missing = sids.filter((sid) => !received.has(sid));
    if (missing.length === 0 || performance.now() > deadline) return missing;
    await sleep(wait, undefined, { ref: false });
    wait = Math.min(wait * 1.5, TRACK_POLL_MAX_MS);
  }
}
