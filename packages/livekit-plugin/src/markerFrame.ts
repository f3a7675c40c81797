// SPDX-License-Identifier: Apache-2.0
import { AudioFrame } from '@livekit/rtc-node';

/** `AudioFrame.userdata` key under which a marker frame carries its sentence. */
export const USERDATA_VISAGE_TEXT = 'visage.text';

/** Rate and length of marker frames: 10 ms of silence, the smallest frame the pipeline expects. */
export const MARKER_SAMPLE_RATE = 16_000;
const MARKER_SAMPLES = MARKER_SAMPLE_RATE / 100;

/**
 * A silent frame that stands for one sentence. It travels the agent's audio path like real TTS
 * audio, so the sentence reaches the avatar output only when the speech is really playing.
 */
export function markerFrame(text: string): AudioFrame {
  const frame = new AudioFrame(
    new Int16Array(MARKER_SAMPLES),
    MARKER_SAMPLE_RATE,
    1,
    MARKER_SAMPLES,
  );
  frame.userdata[USERDATA_VISAGE_TEXT] = text;
  return frame;
}

/** The sentence of a marker frame; undefined for ordinary audio. */
export function markerText(frame: AudioFrame): string | undefined {
  const text: unknown = frame.userdata[USERDATA_VISAGE_TEXT];
  return typeof text === 'string' ? text : undefined;
}
