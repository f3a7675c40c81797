// SPDX-License-Identifier: GPL-3.0-or-later
import { AVATAR_CATALOGUE } from '../avatarCatalogue.js';
import { ADA_DESIGN, MILO_DESIGN, NOOR_DESIGN, type FaceDesign } from './faceDesign.js';

/** The face design of each catalogue avatar, keyed by the catalogue's fixed ids. */
const DESIGNS_BY_NAME: Readonly<Record<string, FaceDesign>> = {
  Ada: ADA_DESIGN,
  Milo: MILO_DESIGN,
  Noor: NOOR_DESIGN,
};

export function avatarDesign(avatarId: string): FaceDesign {
  const avatar = AVATAR_CATALOGUE.find((a) => a.avatarId === avatarId);
  const design = avatar ? DESIGNS_BY_NAME[avatar.design] : undefined;
  if (!design) throw new Error(`no face design for avatar ${avatarId}`);
  return design;
}
