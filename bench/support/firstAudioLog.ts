/**
 * A logger for a Visage the bench runs: warnings and worse go to stderr, and the speech player's
 * "first audio handed to LiveKit" lines (info) are kept by utterance id, for the per-stage
 * breakdown of speak -> first audible audio.
 */
import pino, { type Logger } from 'pino';

/** The marks of one utterance's way to its first audio (epoch ms and durations, ms). */
export interface FirstAudioMarks {
  queued_at: number;
  waited_ms: number;
  first_chunk_ms: number;
  handed_ms: number;
}

const FIRST_AUDIO = 'first audio handed to LiveKit';
const KEPT = 1000;

export function firstAudioLog(): { log: Logger; marks: Map<string, FirstAudioMarks> } {
  const marks = new Map<string, FirstAudioMarks>();
  const log = pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (entry.msg === FIRST_AUDIO && typeof entry.utterance_id === 'string') {
          marks.set(entry.utterance_id, entry as unknown as FirstAudioMarks);
          if (marks.size > KEPT) marks.delete(marks.keys().next().value!);
        } else if (Number(entry.level) >= 40) {
          process.stderr.write(line);
        }
      },
    },
  );
  return { log, marks };
}
