export { LiveKitMediaCore, type LiveKitMediaCoreOptions } from './liveKitMediaCore.js';
export { TRANSCRIPTION_TOPIC } from './chatPublisher.js';
export {
  AUDIO_STREAM_TOPIC,
  RPC_CLEAR_BUFFER,
  RPC_PLAYBACK_FINISHED,
  RPC_PLAYBACK_STARTED,
} from './avatarProtocol.js';
