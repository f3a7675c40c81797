// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A logger for a Visage the bench runs: warnings and worse go to stderr; the speech player's
 * "first audio handed to LiveKit" lines (info) are kept by utterance id, for the per-stage
 * breakdown of speak -> first audible audio, and the avatar's "joined the room" lines by room,
 * for the breakdown of create -> video.
 */
import pino, { type Logger } from 'pino';

/** The marks of one utterance's way to its first audio (epoch ms and durations, ms). */
export interface FirstAudioMarks {
  queued_at: number;
  waited_ms: number;
  first_chunk_ms: number;
  handed_ms: number;
  /** Audio already queued ahead of it in the AudioSource (ms). */
  ahead_ms: number;
}

/** The steps of an avatar's join (liveKitMediaSession.ts): its start (epoch ms) and durations. */
export interface JoinMarks {
  join_started_at: number;
  room_ms?: number;
  connect_ms: number;
  publish_ms: number;
  tracks_received_ms?: number;
  first_frame_ms: number;
}

const FIRST_AUDIO = 'first audio handed to LiveKit';
const JOINED = 'avatar joined the room and published its tracks';
const KEPT = 1000;

function keep<T>(map: Map<string, T>, key: string, value: T): void {
  map.set(key, value);
  if (map.size > KEPT) map.delete(map.keys().next().value!);
}

export function firstAudioLog(): {
  log: Logger;
  marks: Map<string, FirstAudioMarks>;
  joins: Map<string, JoinMarks>;
} {
  const marks = new Map<string, FirstAudioMarks>();
  const joins = new Map<string, JoinMarks>();
  const log = pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.msg === FIRST_AUDIO && typeof entry.utterance_id === 'string') {
          keep(marks, entry.utterance_id, entry as unknown as FirstAudioMarks);
        } else if (entry.msg === JOINED && typeof entry.room === 'string') {
          keep(joins, entry.room, entry as unknown as JoinMarks);
        } else if (Number(entry.level) >= 40) {
          process.stderr.write(line);
        }
      },
    },
  );
  return { log, marks, joins };
}
