// SPDX-License-Identifier: GPL-3.0-or-later
export {
  DEFAULT_STAGE_TIMEOUT_MS,
  LiveKitMediaCore,
  type LiveKitMediaCoreOptions,
} from './liveKitMediaCore.js';
export { removeAvatar, type AvatarRemoval } from './roomAdmin.js';
export { TRANSCRIPTION_TOPIC } from './chatPublisher.js';
export { AVATAR_VIDEO_CODECS, type AvatarVideoCodec } from './avatarVideoCodec.js';
// How the avatar's audio enters LiveKit (the tts bench publishes a baseline the same way).
export { AUDIO_QUEUE_MS } from './liveKitMediaSession.js';
export { FRAME_SAMPLES as AUDIO_FRAME_SAMPLES } from './speechPlayer.js';
export { OUTPUT_RATE as AUDIO_RATE } from './utterance.js';
export {
  AUDIO_STREAM_TOPIC,
  RPC_CLEAR_BUFFER,
  RPC_PLAYBACK_FINISHED,
  RPC_PLAYBACK_STARTED,
} from './avatarProtocol.js';
