// SPDX-License-Identifier: GPL-3.0-or-later
import { LIP_CLOSURES, type MouthPose } from './viseme.js';

/**
 * The mouth for speech, from what the sound does (`sound`: an `AudioMouthTracker` pose, where
 * loudness opens the jaw and the spectrum picks the lip shape) and what the phoneme timings say
 * (`timed`: a `MouthSchedule` pose; rest where none are known). The sound moves the mouth, so
 * that what a viewer sees opens and closes with what they hear; the timings add the closures
 * the sound cannot show: the lips pressed for m, b and p, the lip under the teeth for f and v.
 *
 * Phoneme shapes alone kept the mouth nearly shut on loud spread and rounded vowels (i, u):
 * the opening measured in received video then followed the audio envelope at r = 0.35 to 0.5;
 * driven this way, 0.68 to 0.86, and 0.84 to 0.91 in 1.5 s windows
 * (test/media/room/photoSession.slow.test.ts).
 */
export function speechMouth(sound: MouthPose, timed: MouthPose): MouthPose {
  return LIP_CLOSURES.has(timed.viseme) ? timed : sound;
}

/**
 * The mouth for audio whose words are known but whose timings were found by aligning them to
 * the audio (`alignPhonemes`): the sound's loudness opens the jaw, as in `speechMouth`, and the
 * words give both the closures and the lip shape, where the sound alone only guesses the shape
 * from its spectrum (right for about half of the frames, and never for m, b or p).
 */
export function wordsMouth(sound: MouthPose, words: MouthPose): MouthPose {
  if (LIP_CLOSURES.has(words.viseme)) return words;
  if (sound.openness === 0 || words.viseme === 'rest') return sound;
  return { viseme: words.viseme, openness: sound.openness };
}
