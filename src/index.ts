/**
 * `visage`: the package entry. The LiveKit Agents plugin (`AvatarSession`) is exported from
 * here once it lands; until then the entry re-exports the typed client.
 */
export * from './client/index.js';
