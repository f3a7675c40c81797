// SPDX-License-Identifier: GPL-3.0-or-later
import type { Room } from '@livekit/rtc-node';
import { TRANSCRIPTION_TOPIC } from './chatPublisher.js';

/** One `lk.transcription` text stream, as it grows. */
export interface TranscriptionUpdate {
  /** The participant who sent it (agents publish their user's transcripts and their own). */
  readonly identity: string;
  readonly streamId: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** All the stream carried so far. */
  readonly text: string;
  /** The stream has ended. */
  readonly done: boolean;
}

/** The most text one transcription stream may carry; the rest is not read. */
const MAX_STREAM_CHARS = 20_000;

/**
 * The room's `lk.transcription` text streams, read as they grow, for everything in the session
 * that reads transcripts (a topic takes one handler): `listener` hears each stream after every
 * chunk and once more when it ends
 * (not when it was cut off).
 */
export function listenToTranscriptions(
  room: Room,
  listener: (update: TranscriptionUpdate) => void,
): void {
  room.registerTextStreamHandler(TRANSCRIPTION_TOPIC, (reader, { identity }) => {
    const attributes = reader.info.attributes ?? {};
    const streamId = reader.info.streamId;
    void (async () => {
      let text = '';
      try {
        for await (const chunk of reader) {
          if (text.length + chunk.length > MAX_STREAM_CHARS) break;
          text += chunk;
          listener({ identity, streamId, attributes, text, done: false });
        }
      } catch {
        // A stream cut by its sender leaving has not ended: nothing final is said of it.
        return;
      }
      listener({ identity, streamId, attributes, text, done: true });
    })();
  });
}
