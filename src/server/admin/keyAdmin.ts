// SPDX-License-Identifier: GPL-3.0-or-later
import { ID_PREFIXES, newId, newSecretKey } from '@visage-avatar/client/api';
import type { ApiKeyRecord, Store } from '../store/store.js';

/**
 * Operator-side key management (the API has none). The same operations run in the CLI's own
 * process or, while a server owns the data directory, inside the server via its admin socket.
 */
export interface KeyView {
  id: string;
  name: string;
  hint: string;
  cap: number;
  created_at: string;
  revoked_at: string | null;
}

export function keyView(k: ApiKeyRecord): KeyView {
  return {
    id: k.id,
    name: k.name,
    hint: k.secretHint,
    cap: k.concurrencyCap,
    created_at: k.createdAt.toISOString(),
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}

export class KeyNotFoundError extends Error {
  constructor(id: string) {
    super(`no key ${id}`);
    this.name = 'KeyNotFoundError';
  }
}

export const keyAdmin = {
  async create(store: Store, name: string, cap: number, secret = newSecretKey()) {
    const record = await store.insertKey({ id: newId(ID_PREFIXES.key), name, secret, cap });
    return { key: keyView(record), secret };
  },

  async list(store: Store): Promise<KeyView[]> {
    return (await store.listKeys()).map(keyView);
  },

  /**
   * Revokes the key and ends its live sessions in the database (`key_revoked`). A running server
   * passes `sessionsEnded` to stop their avatars at once; without one (no server owns the data
   * directory) nothing runs them.
   */
  async revoke(
    store: Store,
    id: string,
    sessionsEnded?: (sessionIds: string[]) => Promise<void>,
  ): Promise<KeyView> {
    const revoked = await store.revokeKey(id);
    if (!revoked) throw new KeyNotFoundError(id);
    await sessionsEnded?.(revoked.endedSessions);
    return keyView(revoked.key);
  },

  async setCap(store: Store, id: string, cap: number): Promise<KeyView> {
    const record = await store.setKeyCap(id, cap);
    if (!record) throw new KeyNotFoundError(id);
    return keyView(record);
  },

  /** Registers a given secret (VISAGE_DEV_KEY) unless it exists; never re-creates a revoked one. */
  async ensure(store: Store, name: string, cap: number, secret: string) {
    const existing = await store.findKeyBySecret(secret);
    if (existing) return { key: keyView(existing), created: false };
    const created = await keyAdmin.create(store, name, cap, secret);
    return { key: created.key, created: true };
  },
};
