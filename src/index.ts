// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * `visage`: the package entry. The LiveKit Agents plugin (`AvatarSession`, which registers
 * itself with the agents framework on import) and the typed client of the Visage API, which are
 * `@visage-avatar/livekit-plugin`'s and `@visage-avatar/client`'s (the same classes).
 * Backends that only need the client can import `visage/client` without `@livekit/agents`.
 */
export * from '@visage-avatar/client';
export * from '@visage-avatar/livekit-plugin';
