// SPDX-License-Identifier: GPL-3.0-or-later
export { detectSpeech, type SpeechDetection } from './detectSpeech.js';
export { SileroVad, SILERO_SAMPLE_RATE } from './sileroVad.js';
