// SPDX-License-Identifier: GPL-3.0-or-later
import type { EndReason, SessionStatus } from '@visage-avatar/client/api';
import type { Logger } from 'pino';
import { openEmbeddedDatabase, type Database } from './database.js';
import { ClusterStore } from './clusterStore.js';
import {
  listenForNotifications,
  type NotificationHandlers,
  type NotificationListener,
} from './notificationListener.js';
import { openPostgresDatabase } from './postgresDatabase.js';
import { migrate } from './migrate.js';
import { MIGRATIONS } from './schema.js';
import { KeyedSerialQueue } from './keyedSerialQueue.js';
import * as keys from './keys.js';
import * as files from './files.js';
import * as voices from './voices.js';
import * as avatars from './avatars.js';
import * as sessions from './sessions.js';
import * as blobs from './blobs.js';
import * as serverSecrets from './serverSecrets.js';
import { warmUp, type WarmedUp, type WarmUpOptions } from './warmUp.js';
import type { ApiKeyRecord, NewKey } from './keys.js';
import type { FileRecord } from './files.js';
import type { VoiceRecord } from './voices.js';
import type { AvatarRecord, NewAvatar, StockAvatar } from './avatars.js';
import type { CapacityRefusal, NewSession, Placement, SessionRecord, Stamps } from './sessions.js';
import type { Page } from './paging.js';

/**
 * Everything persistent (keys, files metadata, voices, avatars, sessions, blobs) goes through
 * `Store`, on the embedded PGlite or on a PostgreSQL server (`DATABASE_URL`) with the same SQL.
 * This class opens and migrates the database and holds what lives in the process (the key
 * listeners, the per-key create queue); the SQL of each aggregate is in its own module (keys.ts,
 * files.ts, voices.ts, avatars.ts, sessions.ts, blobs.ts, clusterStore.ts), each with its typed
 * row and the one function that maps it. File bytes live beside the embedded database, or in the
 * shared one (FileStorage).
 */

export { hashSecret, type ApiKeyRecord } from './keys.js';
export type { FileRecord } from './files.js';
export type { VoiceRecord } from './voices.js';
export type { AvatarRecord, NewAvatar } from './avatars.js';
export type { CapacityRefusal, Placement, SessionRecord, Stamps } from './sessions.js';
export type { Page } from './paging.js';

type Listed<T> = Promise<Page<T> | 'unknown_cursor'>;

export class Store {
  /** The nodes sharing this database, when it is a shared PostgreSQL server. */
  readonly cluster: ClusterStore | undefined;
  /** Creates of one key, one at a time in this process (see insertSessionWithinCaps). */
  private readonly createsByKey = new KeyedSerialQueue();
  /** Told of each key this process revoked or whose cap it changed (see onKeyChanged). */
  private readonly keyListeners = new Set<(keyId: string) => void>();

  private constructor(
    private readonly db: Database,
    private readonly url?: string,
  ) {
    this.cluster = db.kind === 'postgres' ? new ClusterStore(db) : undefined;
  }

  /** `template`: a database template (databaseTemplate.ts) a new database is copied from. */
  static async openEmbedded(dataDir: string, options: { template?: string } = {}): Promise<Store> {
    return Store.migrated(await openEmbeddedDatabase(dataDir, options));
  }

  /** A PostgreSQL server shared by every node (`DATABASE_URL`). */
  static async openPostgres(url: string, log?: Logger): Promise<Store> {
    return Store.migrated(await openPostgresDatabase(url, log), url);
  }

  /** `databaseUrl` when given, else the embedded database in `dataDir`. */
  static open(options: {
    dataDir: string;
    databaseUrl?: string;
    log?: Logger;
    template?: string;
  }): Promise<Store> {
    return options.databaseUrl
      ? Store.openPostgres(options.databaseUrl, options.log)
      : Store.openEmbedded(options.dataDir, { template: options.template });
  }

  /** Resolves once the database answers a trivial query (readiness). */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /**
   * Applies the missing migrations (migrate.ts: each in its own transaction under an advisory
   * lock, so nodes starting at once against one PostgreSQL wait for each other, and the later
   * ones find nothing to do).
   */
  private static async migrated(db: Database, url?: string): Promise<Store> {
    try {
      await migrate(db, MIGRATIONS);
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return new Store(db, url);
  }

  /** Where the data lives: the embedded database (one process) or a shared PostgreSQL server. */
  get kind(): Database['kind'] {
    return this.db.kind;
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /**
   * Runs a create's statements in rolled-back transactions while no request waits, so that the
   * embedded database is compiled for them before the first burst (warmUp.ts); nothing on
   * PostgreSQL.
   */
  warmUp(o: WarmUpOptions): Promise<WarmedUp> {
    return warmUp(this.db, o);
  }

  /** LISTEN on a shared PostgreSQL server (a connection of its own, reconnecting by itself). */
  listen(
    channels: readonly string[],
    handlers: NotificationHandlers,
    log: Logger,
  ): Promise<NotificationListener> {
    if (!this.url) throw new Error('notifications need a PostgreSQL server (DATABASE_URL)');
    return listenForNotifications(this.url, channels, handlers, log);
  }

  // ---- keys ---------------------------------------------------------------------------------

  insertKey(k: NewKey): Promise<ApiKeyRecord> {
    return keys.insertKey(this.db, k);
  }

  /** The live (not revoked) key whose secret hashes to this value. */
  findActiveKeyBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    return keys.findKeyBySecret(this.db, secret, true);
  }

  findKeyBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    return keys.findKeyBySecret(this.db, secret, false);
  }

  getKey(id: string): Promise<ApiKeyRecord | undefined> {
    return keys.getKey(this.db, id);
  }

  listKeys(): Promise<ApiKeyRecord[]> {
    return keys.listKeys(this.db);
  }

  /**
   * Revokes a key and, in the same transaction, ends its live sessions (`key_revoked`): nothing
   * can drive them any more. Returns the key and the ids of the sessions it ended.
   */
  async revokeKey(id: string): Promise<{ key: ApiKeyRecord; endedSessions: string[] } | undefined> {
    const revoked = await keys.revokeKey(this.db, id, this.cluster !== undefined);
    if (revoked) this.keyChanged(id);
    return revoked;
  }

  async setKeyCap(id: string, cap: number): Promise<ApiKeyRecord | undefined> {
    const key = await keys.setKeyCap(this.db, id, cap, this.cluster !== undefined);
    if (key) this.keyChanged(id);
    return key;
  }

  /**
   * Calls `listener` with the id of each key this process revokes or gives a new cap, once the
   * change is committed (what remembers a key's state in memory forgets it). Returns the undo.
   */
  onKeyChanged(listener: (keyId: string) => void): () => void {
    this.keyListeners.add(listener);
    return () => this.keyListeners.delete(listener);
  }

  /** Another process changed the key (the cluster heard it on KEYS_CHANNEL). */
  keyChangedElsewhere(keyId: string): void {
    this.keyChanged(keyId);
  }

  private keyChanged(keyId: string): void {
    for (const listener of this.keyListeners) listener(keyId);
  }

  // ---- files --------------------------------------------------------------------------------

  insertFile(f: Omit<FileRecord, 'createdAt'>): Promise<FileRecord> {
    return files.insertFile(this.db, f);
  }

  /** A file of this key that was not deleted. */
  getFile(keyId: string, id: string): Promise<FileRecord | undefined> {
    return files.getFile(this.db, keyId, id);
  }

  listFiles(keyId: string, limit: number, after?: string): Listed<FileRecord> {
    return files.listFiles(this.db, keyId, limit, after);
  }

  /** Marks a file of this key deleted (idempotent); false when the key never had it. */
  deleteFile(keyId: string, id: string): Promise<boolean> {
    return files.deleteFile(this.db, keyId, id);
  }

  // ---- voices -------------------------------------------------------------------------------

  insertVoice(v: Omit<VoiceRecord, 'createdAt'>): Promise<VoiceRecord> {
    return voices.insertVoice(this.db, v);
  }

  /** A voice of this key that was not deleted. */
  getVoice(keyId: string, id: string): Promise<VoiceRecord | undefined> {
    return voices.getVoice(this.db, keyId, id);
  }

  listVoices(keyId: string, limit: number, after?: string): Listed<VoiceRecord> {
    return voices.listVoices(this.db, keyId, limit, after);
  }

  /** Marks a voice of this key deleted, dropping its profile; false when the key never had it. */
  deleteVoice(keyId: string, id: string): Promise<boolean> {
    return voices.deleteVoice(this.db, keyId, id);
  }

  // ---- avatars ------------------------------------------------------------------------------

  /** Makes the stock rows match the catalogue that ships with this code. */
  seedStockAvatars(stock: readonly StockAvatar[], createdAt: Date): Promise<void> {
    return avatars.seedStockAvatars(this.db, stock, createdAt);
  }

  insertAvatar(a: NewAvatar): Promise<AvatarRecord> {
    return avatars.insertAvatar(this.db, a);
  }

  /** A stock avatar, or a photo avatar of this key; never a deleted one. */
  getAvatar(keyId: string, id: string): Promise<AvatarRecord | undefined> {
    return avatars.getAvatar(this.db, keyId, id);
  }

  /** Any live avatar by its id alone, whoever owns it: for signed URLs, which carry no key. */
  findAvatar(id: string): Promise<AvatarRecord | undefined> {
    return avatars.findAvatar(this.db, id);
  }

  /** The stock avatars, in catalogue order. */
  listStockAvatars(): Promise<AvatarRecord[]> {
    return avatars.listStockAvatars(this.db);
  }

  listPhotoAvatars(keyId: string, limit: number, after?: string): Listed<AvatarRecord> {
    return avatars.listPhotoAvatars(this.db, keyId, limit, after);
  }

  /** Marks a photo avatar of this key deleted; the avatar, or undefined when never the key's. */
  deleteAvatar(keyId: string, id: string): Promise<AvatarRecord | undefined> {
    return avatars.deleteAvatar(this.db, keyId, id);
  }

  // ---- the service's own secrets ------------------------------------------------------------

  /** The secret named `name`, made (32 random bytes) by the first caller on any node. */
  serverSecret(name: string): Promise<Buffer> {
    return serverSecrets.serverSecret(this.db, name);
  }

  // ---- sessions -----------------------------------------------------------------------------

  /**
   * Inserts a session if the key is under its cap, a node has room and the room is not another
   * key's, atomically (sessions.ts, insertSessionLocked).
   *
   * On PostgreSQL, this process takes one key's creates one at a time, and refuses a create at
   * the cap from a plain count before opening a transaction: a burst of creates for one key (300
   * at once in the cluster test) then holds one connection per node instead of queueing every
   * request on the key's row lock with a connection each, which starved the pool (other requests
   * waited past its timeout and failed as if the database were down). A count that is stale can
   * only refuse a create that would have been refused a moment earlier; one under the cap is
   * checked again under the lock. On the embedded database a create is one statement, as cheap
   * as that count, with nothing to queue for (PGlite runs one statement at a time).
   */
  insertSessionWithinCaps(
    s: NewSession,
    placement: Placement,
    stamps?: Stamps,
  ): Promise<{ session: SessionRecord; active: number; cap: number } | CapacityRefusal> {
    if (this.db.kind === 'embedded') {
      return sessions.insertSessionLocked(this.db, s, placement, stamps);
    }
    return this.createsByKey.run(s.keyId, async () => {
      stamps?.mark('keyTurn');
      const { cap, active } = await sessions.capAndLiveForKey(this.db, s.keyId);
      stamps?.mark('count');
      if (active >= cap) return { refused: 'concurrency_cap', active, cap };
      return sessions.insertSessionLocked(this.db, s, placement, stamps);
    });
  }

  /** A session by id, whatever its key (for the node that runs it). */
  getSessionById(id: string): Promise<SessionRecord | undefined> {
    return sessions.getSession(this.db, id);
  }

  getSession(keyId: string, id: string): Promise<SessionRecord | undefined> {
    return sessions.getSession(this.db, id, keyId);
  }

  listSessions(
    keyId: string,
    limit: number,
    after?: string,
    status?: SessionStatus,
  ): Listed<SessionRecord> {
    return sessions.listSessions(this.db, keyId, limit, after, status);
  }

  setSessionWaiting(id: string, waiting: boolean): Promise<SessionRecord | undefined> {
    return sessions.setSessionWaiting(this.db, id, waiting);
  }

  /** Ends a live session and frees its node's slot; undefined when it had already ended. */
  endSession(id: string, reason: EndReason): Promise<SessionRecord | undefined> {
    return sessions.endSession(this.db, id, reason);
  }

  /** At start-up: sessions a crashed process left live on this node can never be driven again. */
  endLiveSessionsOnNode(nodeId: string, reason: EndReason): Promise<string[]> {
    return sessions.endLiveSessionsOnNode(this.db, nodeId, reason);
  }

  /** Ids of the sessions the database lists as live on this node (for reconciliation). */
  liveSessionIdsOnNode(nodeId: string): Promise<Set<string>> {
    return sessions.liveSessionIdsOnNode(this.db, nodeId);
  }

  countLiveForKey(keyId: string): Promise<number> {
    return sessions.countLive(this.db, 'key_id', keyId);
  }

  // ---- blobs (file bytes in a shared database) -----------------------------------------------

  putBlob(id: string, bytes: Uint8Array): Promise<void> {
    return blobs.putBlob(this.db, id, bytes);
  }

  getBlob(id: string): Promise<Uint8Array | undefined> {
    return blobs.getBlob(this.db, id);
  }

  deleteBlob(id: string): Promise<void> {
    return blobs.deleteBlob(this.db, id);
  }
}
