// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * `visage`: the package entry. The LiveKit Agents plugin (`AvatarSession`, which registers
 * itself with the agents framework on import) and the typed client of the Visage API.
 * Backends that only need the client can import `visage/client` without `@livekit/agents`.
 */
export * from './client/index.js';
export * from './plugin/index.js';
