// SPDX-License-Identifier: GPL-3.0-or-later
import { z } from 'zod';
import { VoiceUnavailableError, type EngineVoiceRef } from '../ttsEngine.js';

/** What a provider engine stores with a voice: the provider's id of the clone. */
export const providerVoiceSchema = z.object({
  schema: z.literal('visage.provider-voice/1'),
  provider: z.string(),
  provider_voice_id: z.string().min(1).max(200),
});
export type ProviderVoice = z.infer<typeof providerVoiceSchema>;

export function providerVoice(provider: string, providerVoiceId: string): ProviderVoice {
  return { schema: 'visage.provider-voice/1', provider, provider_voice_id: providerVoiceId };
}

/** The provider's voice id stored with `voice`; VoiceUnavailableError when it has none. */
export function providerVoiceId(provider: string, voice: EngineVoiceRef): string {
  const parsed = providerVoiceSchema.safeParse(voice.stored);
  if (!parsed.success || parsed.data.provider !== provider) {
    throw new VoiceUnavailableError(`voice ${voice.voiceId} is not a ${provider} voice`);
  }
  return parsed.data.provider_voice_id;
}
