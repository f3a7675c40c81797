import type { DecodedAudio } from '../media/audio/index.js';
import { analyzeVoiceClip as analyze } from '../media/voice/index.js';
import type { VoiceAnalyzer } from './voiceClip.js';

/** The speaker profile of a reference clip, computed once when the voice is created. */
export const analyzeVoiceClip: VoiceAnalyzer = async (clip: DecodedAudio) =>
  analyze(clip.mono, clip.sampleRate);
