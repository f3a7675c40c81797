// SPDX-License-Identifier: Apache-2.0
/** The LiveKit Agents plugin: a Visage avatar speaks the agent's replies. */
export { AvatarSession } from './avatarSession.js';
export type { AvatarFace, AvatarMode, AvatarSessionOptions, StartOptions } from './options.js';
export type { AvatarImage } from './photoAvatar.js';
export { VisageCapacityError, VisageException } from './errors.js';
export { VisageTextTTS } from './visageTextTts.js';
export { VisageSpeechOutput, type VisageSpeechOutputOptions } from './visageSpeechOutput.js';
export { VisageAudioStreamOutput } from './visageAudioStreamOutput.js';
export { IdleController, type WaitingStateTarget } from './idleController.js';
export { SessionCommandQueue } from './sessionCommandQueue.js';
export { parseAvatarChat, type AvatarChatMessage, AVATAR_CHAT_TOPIC } from './avatarChat.js';
export { VisagePlugin } from './visagePlugin.js';

import { registerVisagePlugin } from './visagePlugin.js';

registerVisagePlugin();
