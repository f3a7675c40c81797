// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The built-in avatar catalogue: every avatar Visage can render, each with the stock voice it
 * speaks with when a session names no `voice_id`. IDs are fixed so that clients can hard-code a
 * catalogue entry across restarts and nodes.
 *
 * The renderer (`src/media/render/`) keys its face designs by `avatarId`; the TTS side keys stock
 * voice profiles by `voiceId` (`src/media/voice/`).
 */
export interface CatalogueAvatar {
  readonly avatarId: string;
  readonly name: string;
  /** The face design the renderer draws (`src/media/render/avatarDesigns.ts`). */
  readonly design: string;
  readonly description: string;
  readonly defaultVoice: StockVoice;
}

export interface StockVoice {
  readonly voiceId: string;
  readonly name: string;
  /** Rough speaker description, used by the TTS side to pick base pitch and vocal-tract size. */
  readonly speaker: 'female' | 'male';
}

export const AVATAR_CATALOGUE: readonly CatalogueAvatar[] = [
  {
    avatarId: 'avt_Ada000000000000000000001',
    name: 'Ada',
    design: 'Ada',
    description: 'Warm presenter with dark hair, calm delivery.',
    defaultVoice: { voiceId: 'voice_Ada000000000000000000001', name: 'Ada', speaker: 'female' },
  },
  {
    avatarId: 'avt_Milo00000000000000000001',
    name: 'Milo',
    design: 'Milo',
    description: 'Friendly support agent with short hair, brisk delivery.',
    defaultVoice: { voiceId: 'voice_Milo00000000000000000001', name: 'Milo', speaker: 'male' },
  },
  {
    avatarId: 'avt_Noor00000000000000000001',
    name: 'Noor',
    design: 'Noor',
    description: 'Tutor with glasses, clear and measured delivery.',
    defaultVoice: { voiceId: 'voice_Noor00000000000000000001', name: 'Noor', speaker: 'female' },
  },
];

export function findAvatar(avatarId: string): CatalogueAvatar | undefined {
  return AVATAR_CATALOGUE.find((a) => a.avatarId === avatarId);
}

/** The catalogue avatar drawn with `design` (the renderer keys its atlases by avatar id). */
export function findAvatarByDesign(design: string): CatalogueAvatar | undefined {
  return AVATAR_CATALOGUE.find((a) => a.design === design);
}

export function findStockVoice(voiceId: string): StockVoice | undefined {
  return AVATAR_CATALOGUE.find((a) => a.defaultVoice.voiceId === voiceId)?.defaultVoice;
}
