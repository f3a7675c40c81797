import { createHash } from 'node:crypto';
import type { EndReason, SessionStatus } from '../../api/index.js';
import type { Logger } from 'pino';
import { openEmbeddedDatabase, type Database, type Queryable } from './database.js';
import {
  ClusterStore,
  insertCommand,
  placeOnClusterNode,
  KEYS_CHANNEL,
  RECONCILE_CHANNEL,
  releaseSlots,
  type NewCommand,
} from './clusterStore.js';
import {
  listenForNotifications,
  type NotificationHandlers,
  type NotificationListener,
} from './notificationListener.js';
import { openPostgresDatabase } from './postgresDatabase.js';
import { migrate } from './migrate.js';
import { MIGRATIONS } from './schema.js';
import { KeyedSerialQueue } from './keyedSerialQueue.js';

/**
 * The one module that knows SQL. Everything persistent (keys, files metadata, voices, sessions)
 * goes through `Store`, on the embedded PGlite or on a PostgreSQL server (`DATABASE_URL`) with
 * the same SQL. File bytes live beside the embedded database, or in the shared one (FileStorage).
 */

export interface ApiKeyRecord {
  id: string;
  name: string;
  secretHint: string;
  concurrencyCap: number;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface FileRecord {
  id: string;
  keyId: string;
  filename: string;
  contentType: string;
  bytes: number;
  durationMs: number;
  format: string;
  createdAt: Date;
}

export interface VoiceRecord {
  id: string;
  keyId: string;
  name: string;
  fileId: string | null;
  sourceUrl: string | null;
  durationMs: number;
  /** The engine that made the voice (`espeak`, `elevenlabs`, `cartesia`). */
  engine: string;
  /** What that engine derived from the clip (opaque JSON here). */
  profile: unknown;
  createdAt: Date;
}

/** An avatar: a stock one (drawn from a design, no key) or a photo avatar of one key. */
export interface AvatarRecord {
  id: string;
  /** The owning key; null for stock avatars (everyone's). */
  keyId: string | null;
  name: string;
  description: string | null;
  source: 'stock' | 'photo';
  defaultVoiceId: string;
  /** Stock: the face design the renderer draws. */
  design: string | null;
  /** Photo: the stored picture, the renderer's build and the preview PNG (file storage ids). */
  imageBlobId: string | null;
  buildBlobId: string | null;
  previewBlobId: string | null;
  createdAt: Date;
}

export type NewAvatar = Omit<AvatarRecord, 'createdAt'>;

export interface SessionRecord {
  id: string;
  keyId: string;
  nodeId: string;
  status: SessionStatus;
  avatarId: string;
  voiceId: string;
  mode: 'video';
  transport: 'livekit';
  livekitUrl: string;
  roomName: string;
  agentIdentity: string;
  publishOnBehalf: string | null;
  /** The caller brought the LiveKit (and the avatar's token): no participant tokens for it. */
  callerLiveKit: boolean;
  idleTimeoutSeconds: number;
  maxDurationSeconds: number;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
  endReason: EndReason | null;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** Why an atomic session insert was refused. */
export type CapacityRefusal =
  | { refused: 'concurrency_cap'; active: number; cap: number }
  | { refused: 'platform_busy'; active: number; cap: number }
  | { refused: 'room_not_available'; active: number; cap: number };

/**
 * Where a new session runs. `node`: this node, within its own capacity (the embedded store, one
 * process). `cluster`: the least-loaded live node of the shared database with room (this one
 * first among equals); when it is another node, `handoff` is the command that tells that node
 * to start it, inserted in the same transaction.
 */
export type Placement =
  | { kind: 'node'; nodeId: string; capacity: number }
  | {
      kind: 'cluster';
      self: string;
      liveWithinMs: number;
      handoff: (session: SessionRecord) => NewCommand;
    };

/** Keys are high-entropy random secrets, so a fast hash is enough (no password KDF needed). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

const LIVE = `('active', 'waiting')`;

/** Files and voices are deleted softly (the row stays as a tombstone); lists skip tombstones. */
const LIVE_ROW_OF_KEY = 'key_id = $2 AND deleted_at IS NULL';

type Row = Record<string, unknown>;
const date = (v: unknown) => (v == null ? null : new Date(v as string));

function keyFromRow(r: Row): ApiKeyRecord {
  return {
    id: r.id as string,
    name: r.name as string,
    secretHint: r.secret_hint as string,
    concurrencyCap: r.concurrency_cap as number,
    createdAt: date(r.created_at)!,
    revokedAt: date(r.revoked_at),
  };
}

function fileFromRow(r: Row): FileRecord {
  return {
    id: r.id as string,
    keyId: r.key_id as string,
    filename: r.filename as string,
    contentType: r.content_type as string,
    bytes: r.bytes as number,
    durationMs: r.duration_ms as number,
    format: r.format as string,
    createdAt: date(r.created_at)!,
  };
}

function voiceFromRow(r: Row): VoiceRecord {
  return {
    id: r.id as string,
    keyId: r.key_id as string,
    name: r.name as string,
    fileId: (r.file_id as string | null) ?? null,
    sourceUrl: (r.source_url as string | null) ?? null,
    durationMs: r.duration_ms as number,
    engine: r.engine as string,
    profile: r.profile ?? null,
    createdAt: date(r.created_at)!,
  };
}

function avatarFromRow(r: Row): AvatarRecord {
  return {
    id: r.id as string,
    keyId: (r.key_id as string | null) ?? null,
    name: r.name as string,
    description: (r.description as string | null) ?? null,
    source: r.source as AvatarRecord['source'],
    defaultVoiceId: r.default_voice_id as string,
    design: (r.design as string | null) ?? null,
    imageBlobId: (r.image_blob_id as string | null) ?? null,
    buildBlobId: (r.build_blob_id as string | null) ?? null,
    previewBlobId: (r.preview_blob_id as string | null) ?? null,
    createdAt: date(r.created_at)!,
  };
}

function sessionFromRow(r: Row): SessionRecord {
  return {
    id: r.id as string,
    keyId: r.key_id as string,
    nodeId: r.node_id as string,
    status: r.status as SessionStatus,
    avatarId: r.avatar_id as string,
    voiceId: r.voice_id as string,
    mode: 'video',
    transport: 'livekit',
    livekitUrl: r.livekit_url as string,
    roomName: r.room_name as string,
    agentIdentity: r.agent_identity as string,
    publishOnBehalf: (r.publish_on_behalf as string | null) ?? null,
    callerLiveKit: r.caller_livekit === true,
    idleTimeoutSeconds: r.idle_timeout_seconds as number,
    maxDurationSeconds: r.max_duration_seconds as number,
    createdAt: date(r.created_at)!,
    updatedAt: date(r.updated_at)!,
    endedAt: date(r.ended_at),
    endReason: (r.end_reason as EndReason | null) ?? null,
  };
}

/** Newest-first pagination on the `seq` column with an `after=<id>` cursor. */
async function page<T>(
  db: Queryable,
  table: 'files' | 'voices' | 'sessions' | 'avatars',
  where: string,
  params: unknown[],
  limit: number,
  after: string | undefined,
  map: (r: Row) => T,
): Promise<Page<T> | 'unknown_cursor'> {
  let cursor = '';
  const args = [...params];
  if (after) {
    const found = await db.query<Row>(`SELECT seq FROM ${table} WHERE id = $1 AND ${where}`, [
      after,
      ...params,
    ]);
    // Placeholders in `where` are numbered from $2 in the cursor lookup above; renumber below.
    if (found.rows.length === 0) return 'unknown_cursor';
    args.push(found.rows[0]!.seq);
    cursor = ` AND seq < $${args.length}`;
  }
  args.push(limit + 1);
  const rows = await db.query<Row>(
    `SELECT * FROM ${table} WHERE ${renumber(where, 0)}${cursor} ORDER BY seq DESC LIMIT $${args.length}`,
    args,
  );
  return { items: rows.rows.slice(0, limit).map(map), hasMore: rows.rows.length > limit };
}

/** `where` clauses are written with placeholders starting at $2 (after the cursor id). */
function renumber(where: string, shift: number): string {
  return where.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) - 1 + shift}`);
}

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

  static async openEmbedded(dataDir: string): Promise<Store> {
    return Store.migrated(await openEmbeddedDatabase(dataDir));
  }

  /** A PostgreSQL server shared by every node (`DATABASE_URL`). */
  static async openPostgres(url: string, log?: Logger): Promise<Store> {
    return Store.migrated(await openPostgresDatabase(url, log), url);
  }

  /** `databaseUrl` when given, else the embedded database in `dataDir`. */
  static open(options: { dataDir: string; databaseUrl?: string; log?: Logger }): Promise<Store> {
    return options.databaseUrl
      ? Store.openPostgres(options.databaseUrl, options.log)
      : Store.openEmbedded(options.dataDir);
  }

  private static async migrated(db: Database, url?: string): Promise<Store> {
    const store = new Store(db, url);
    try {
      await store.migrate();
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return store;
  }

  /** Where the data lives: the embedded database (one process) or a shared PostgreSQL server. */
  get kind(): Database['kind'] {
    return this.db.kind;
  }

  /**
   * Applies the missing migrations (migrate.ts: each in its own transaction under an advisory
   * lock, so nodes starting at once against one PostgreSQL wait for each other, and the later
   * ones find nothing to do).
   */
  private async migrate(): Promise<void> {
    await migrate(this.db, MIGRATIONS);
  }

  close(): Promise<void> {
    return this.db.close();
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

  async insertKey(k: {
    id: string;
    name: string;
    secret: string;
    cap: number;
  }): Promise<ApiKeyRecord> {
    const hint = `${k.secret.slice(0, 7)}…${k.secret.slice(-4)}`;
    const r = await this.db.query<Row>(
      `INSERT INTO api_keys (id, name, secret_hash, secret_hint, concurrency_cap, created_at)
       VALUES ($1, $2, $3, $4, $5, now()) RETURNING *`,
      [k.id, k.name, hashSecret(k.secret), hint, k.cap],
    );
    return keyFromRow(r.rows[0]!);
  }

  /** The live (not revoked) key whose secret hashes to this value. */
  async findActiveKeyBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.query<Row>(
      'SELECT * FROM api_keys WHERE secret_hash = $1 AND revoked_at IS NULL',
      [hashSecret(secret)],
    );
    return r.rows[0] ? keyFromRow(r.rows[0]) : undefined;
  }

  async findKeyBySecret(secret: string): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.query<Row>('SELECT * FROM api_keys WHERE secret_hash = $1', [
      hashSecret(secret),
    ]);
    return r.rows[0] ? keyFromRow(r.rows[0]) : undefined;
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.query<Row>('SELECT * FROM api_keys WHERE id = $1', [id]);
    return r.rows[0] ? keyFromRow(r.rows[0]) : undefined;
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    const r = await this.db.query<Row>('SELECT * FROM api_keys ORDER BY created_at DESC');
    return r.rows.map(keyFromRow);
  }

  /**
   * Revokes a key and, in the same transaction, ends its live sessions (`key_revoked`): nothing
   * can drive them any more. Returns the key and the ids of the sessions it ended.
   */
  async revokeKey(id: string): Promise<{ key: ApiKeyRecord; endedSessions: string[] } | undefined> {
    const revoked = await this.db.transaction(async (tx) => {
      const r = await tx.query<Row>(
        'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING *',
        [id],
      );
      if (!r.rows[0]) return undefined;
      const ended = await tx.query<{ id: string; node_id: string }>(
        `UPDATE sessions SET status = 'ended', end_reason = 'key_revoked', ended_at = now(),
           updated_at = now()
         WHERE key_id = $1 AND status IN ${LIVE} RETURNING id, node_id`,
        [id],
      );
      await releaseSlots(
        tx,
        ended.rows.map((row) => row.node_id),
      );
      // The nodes running them stop their media now (cluster.ts listens; nobody else does).
      if (ended.rows.length > 0) await tx.query(`SELECT pg_notify($1, '')`, [RECONCILE_CHANNEL]);
      // Every node forgets what it remembers of the key (delivered when this commits).
      if (this.cluster) await tx.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, id]);
      return { key: keyFromRow(r.rows[0]), endedSessions: ended.rows.map((row) => row.id) };
    });
    if (revoked) this.keyChanged(id);
    return revoked;
  }

  async setKeyCap(id: string, cap: number): Promise<ApiKeyRecord | undefined> {
    const r = await this.db.transaction(async (tx) => {
      const updated = await tx.query<Row>(
        'UPDATE api_keys SET concurrency_cap = $2 WHERE id = $1 RETURNING *',
        [id, cap],
      );
      // Every node forgets what it remembers of the key (delivered when this commits).
      if (updated.rows[0] && this.cluster) {
        await tx.query('SELECT pg_notify($1, $2)', [KEYS_CHANNEL, id]);
      }
      return updated;
    });
    if (r.rows[0]) this.keyChanged(id);
    return r.rows[0] ? keyFromRow(r.rows[0]) : undefined;
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

  async insertFile(f: Omit<FileRecord, 'createdAt'>): Promise<FileRecord> {
    const r = await this.db.query<Row>(
      `INSERT INTO files (id, key_id, filename, content_type, bytes, duration_ms, format, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING *`,
      [f.id, f.keyId, f.filename, f.contentType, f.bytes, f.durationMs, f.format],
    );
    return fileFromRow(r.rows[0]!);
  }

  /** A file of this key that was not deleted. */
  async getFile(keyId: string, id: string): Promise<FileRecord | undefined> {
    const r = await this.db.query<Row>(
      'SELECT * FROM files WHERE id = $1 AND key_id = $2 AND deleted_at IS NULL',
      [id, keyId],
    );
    return r.rows[0] ? fileFromRow(r.rows[0]) : undefined;
  }

  async listFiles(keyId: string, limit: number, after?: string) {
    return page(this.db, 'files', LIVE_ROW_OF_KEY, [keyId], limit, after, fileFromRow);
  }

  /**
   * Marks a file of this key deleted and forgets its name; the row stays so that deleting again
   * is recognised (idempotent). False when the key never had such a file.
   */
  async deleteFile(keyId: string, id: string): Promise<boolean> {
    const r = await this.db.query<Row>(
      `UPDATE files SET deleted_at = COALESCE(deleted_at, now()), filename = ''
       WHERE id = $1 AND key_id = $2 RETURNING id`,
      [id, keyId],
    );
    return r.rows.length > 0;
  }

  // ---- voices -------------------------------------------------------------------------------

  async insertVoice(v: Omit<VoiceRecord, 'createdAt'>): Promise<VoiceRecord> {
    const r = await this.db.query<Row>(
      `INSERT INTO voices (id, key_id, name, file_id, source_url, duration_ms, profile, engine,
         created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now()) RETURNING *`,
      [
        v.id,
        v.keyId,
        v.name,
        v.fileId,
        v.sourceUrl,
        v.durationMs,
        JSON.stringify(v.profile),
        v.engine,
      ],
    );
    return voiceFromRow(r.rows[0]!);
  }

  /** A voice of this key that was not deleted. */
  async getVoice(keyId: string, id: string): Promise<VoiceRecord | undefined> {
    const r = await this.db.query<Row>(
      'SELECT * FROM voices WHERE id = $1 AND key_id = $2 AND deleted_at IS NULL',
      [id, keyId],
    );
    return r.rows[0] ? voiceFromRow(r.rows[0]) : undefined;
  }

  async listVoices(keyId: string, limit: number, after?: string) {
    return page(this.db, 'voices', LIVE_ROW_OF_KEY, [keyId], limit, after, voiceFromRow);
  }

  /**
   * Marks a voice of this key deleted and drops its speaker profile; live sessions hold their
   * own copy of the profile. False when the key never had such a voice.
   */
  async deleteVoice(keyId: string, id: string): Promise<boolean> {
    const r = await this.db.query<Row>(
      `UPDATE voices SET deleted_at = COALESCE(deleted_at, now()), profile = NULL
       WHERE id = $1 AND key_id = $2 RETURNING id`,
      [id, keyId],
    );
    return r.rows.length > 0;
  }

  // ---- avatars ------------------------------------------------------------------------------

  /**
   * Makes the stock rows match the catalogue that ships with this code (inserted on the first
   * start, their text refreshed on later ones; ids never change). Safe on several nodes at once.
   */
  async seedStockAvatars(
    stock: readonly {
      id: string;
      name: string;
      description: string;
      defaultVoiceId: string;
      design: string;
    }[],
    createdAt: Date,
  ): Promise<void> {
    for (const a of stock) {
      await this.db.query(
        `INSERT INTO avatars (id, key_id, name, description, source, default_voice_id, design,
           created_at)
         VALUES ($1, NULL, $2, $3, 'stock', $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,
           default_voice_id = EXCLUDED.default_voice_id, design = EXCLUDED.design`,
        [a.id, a.name, a.description, a.defaultVoiceId, a.design, createdAt.toISOString()],
      );
    }
  }

  async insertAvatar(a: NewAvatar): Promise<AvatarRecord> {
    const r = await this.db.query<Row>(
      `INSERT INTO avatars (id, key_id, name, description, source, default_voice_id, design,
         image_blob_id, build_blob_id, preview_blob_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now()) RETURNING *`,
      [
        a.id,
        a.keyId,
        a.name,
        a.description,
        a.source,
        a.defaultVoiceId,
        a.design,
        a.imageBlobId,
        a.buildBlobId,
        a.previewBlobId,
      ],
    );
    return avatarFromRow(r.rows[0]!);
  }

  /** A stock avatar, or a photo avatar of this key; never a deleted one. */
  async getAvatar(keyId: string, id: string): Promise<AvatarRecord | undefined> {
    const r = await this.db.query<Row>(
      `SELECT * FROM avatars WHERE id = $1 AND (key_id = $2 OR key_id IS NULL)
         AND deleted_at IS NULL`,
      [id, keyId],
    );
    return r.rows[0] ? avatarFromRow(r.rows[0]) : undefined;
  }

  /** The stock avatars, in catalogue order. */
  async listStockAvatars(): Promise<AvatarRecord[]> {
    const r = await this.db.query<Row>(
      `SELECT * FROM avatars WHERE key_id IS NULL AND deleted_at IS NULL ORDER BY seq`,
    );
    return r.rows.map(avatarFromRow);
  }

  async listPhotoAvatars(keyId: string, limit: number, after?: string) {
    return page(this.db, 'avatars', LIVE_ROW_OF_KEY, [keyId], limit, after, avatarFromRow);
  }

  /**
   * Marks a photo avatar of this key deleted (the row stays, so deleting again is recognised).
   * Returns the avatar (deleted now or before), or undefined when the key never had it.
   */
  async deleteAvatar(keyId: string, id: string): Promise<AvatarRecord | undefined> {
    const r = await this.db.query<Row>(
      `UPDATE avatars SET deleted_at = COALESCE(deleted_at, now())
       WHERE id = $1 AND key_id = $2 RETURNING *`,
      [id, keyId],
    );
    return r.rows[0] ? avatarFromRow(r.rows[0]) : undefined;
  }

  // ---- sessions -----------------------------------------------------------------------------

  /**
   * Inserts a session if the key is under its cap, a node has room and the room is not another
   * key's, atomically: the key's row and the room's claim are locked for the check-and-insert,
   * so parallel creates cannot overshoot or share a room across keys (on PostgreSQL at READ
   * COMMITTED, each count after the lock sees every earlier commit). With `node` placement the
   * node's count is serialized by a transaction-scoped advisory lock on the node id; with
   * `cluster` placement by the chosen node's row (see placeOnClusterNode).
   *
   * This process takes one key's creates one at a time, and refuses a create at the cap from a
   * plain count before opening a transaction: a burst of creates for one key (300 at once in the
   * cluster test) then holds one connection per node instead of queueing every request on the
   * key's row lock with a connection each, which starved the pool (other requests waited past
   * its timeout and failed as if the database were down). A count that is stale can only refuse
   * a create that would have been refused a moment earlier; one under the cap is checked again
   * under the lock.
   */
  insertSessionWithinCaps(
    s: Omit<
      SessionRecord,
      'createdAt' | 'updatedAt' | 'endedAt' | 'endReason' | 'status' | 'nodeId'
    >,
    placement: Placement,
  ): Promise<{ session: SessionRecord; active: number; cap: number } | CapacityRefusal> {
    return this.createsByKey.run(s.keyId, async () => {
      const { cap, active } = await this.capAndLiveForKey(s.keyId);
      if (active >= cap) return { refused: 'concurrency_cap', active, cap };
      return this.insertSessionLocked(s, placement);
    });
  }

  private async capAndLiveForKey(keyId: string): Promise<{ cap: number; active: number }> {
    const r = await this.db.query<{ cap: number; active: number }>(
      `SELECT concurrency_cap AS cap,
         (SELECT count(*)::int FROM sessions WHERE key_id = $1 AND status IN ${LIVE}) AS active
       FROM api_keys WHERE id = $1`,
      [keyId],
    );
    return r.rows[0]!;
  }

  private insertSessionLocked(
    s: Omit<
      SessionRecord,
      'createdAt' | 'updatedAt' | 'endedAt' | 'endReason' | 'status' | 'nodeId'
    >,
    placement: Placement,
  ): Promise<{ session: SessionRecord; active: number; cap: number } | CapacityRefusal> {
    return this.db.transaction(async (tx) => {
      const key = await tx.query<Row>(
        'SELECT concurrency_cap FROM api_keys WHERE id = $1 FOR UPDATE',
        [s.keyId],
      );
      const cap = key.rows[0]!.concurrency_cap as number;
      const active = await countLive(tx, 'key_id', s.keyId);
      if (active >= cap) return { refused: 'concurrency_cap', active, cap };
      if (!(await claimRoom(tx, s.livekitUrl, s.roomName, s.keyId))) {
        return { refused: 'room_not_available', active, cap };
      }
      let nodeId: string | undefined;
      if (placement.kind === 'node') {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [placement.nodeId]);
        const onNode = await countLive(tx, 'node_id', placement.nodeId);
        if (onNode < placement.capacity) nodeId = placement.nodeId;
      } else {
        nodeId = await placeOnClusterNode(tx, placement.self, placement.liveWithinMs);
      }
      if (!nodeId) return { refused: 'platform_busy', active, cap };
      const r = await tx.query<Row>(
        `INSERT INTO sessions (id, key_id, node_id, status, avatar_id, voice_id, mode, transport,
           livekit_url, room_name, agent_identity, publish_on_behalf, caller_livekit,
           idle_timeout_seconds, max_duration_seconds, created_at, updated_at)
         VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, now(),
           now())
         RETURNING *`,
        [
          s.id,
          s.keyId,
          nodeId,
          s.avatarId,
          s.voiceId,
          s.mode,
          s.transport,
          s.livekitUrl,
          s.roomName,
          s.agentIdentity,
          s.publishOnBehalf,
          s.callerLiveKit,
          s.idleTimeoutSeconds,
          s.maxDurationSeconds,
        ],
      );
      const session = sessionFromRow(r.rows[0]!);
      if (placement.kind === 'cluster' && nodeId !== placement.self) {
        await insertCommand(tx, placement.handoff(session));
      }
      return { session, active: active + 1, cap };
    });
  }

  /** A session by id, whatever its key (for the node that runs it). */
  async getSessionById(id: string): Promise<SessionRecord | undefined> {
    const r = await this.db.query<Row>('SELECT * FROM sessions WHERE id = $1', [id]);
    return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
  }

  async getSession(keyId: string, id: string): Promise<SessionRecord | undefined> {
    const r = await this.db.query<Row>('SELECT * FROM sessions WHERE id = $1 AND key_id = $2', [
      id,
      keyId,
    ]);
    return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
  }

  async listSessions(keyId: string, limit: number, after?: string, status?: SessionStatus) {
    const where = status ? 'key_id = $2 AND status = $3' : 'key_id = $2';
    const params = status ? [keyId, status] : [keyId];
    return page(this.db, 'sessions', where, params, limit, after, sessionFromRow);
  }

  async setSessionWaiting(id: string, waiting: boolean): Promise<SessionRecord | undefined> {
    const r = await this.db.query<Row>(
      `UPDATE sessions SET status = $2, updated_at = now()
       WHERE id = $1 AND status IN ${LIVE} RETURNING *`,
      [id, waiting ? 'waiting' : 'active'],
    );
    return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
  }

  /** Ends a live session and frees its node's slot; undefined when it had already ended. */
  async endSession(id: string, reason: EndReason): Promise<SessionRecord | undefined> {
    const r = await this.db.query<Row>(
      `WITH ended AS (
         UPDATE sessions SET status = 'ended', end_reason = $2, ended_at = now(),
           updated_at = now()
         WHERE id = $1 AND status IN ${LIVE} RETURNING *),
       released AS (
         UPDATE cluster_nodes c SET running = greatest(c.running - 1, 0)
         FROM ended WHERE c.id = ended.node_id)
       SELECT * FROM ended`,
      [id, reason],
    );
    return r.rows[0] ? sessionFromRow(r.rows[0]) : undefined;
  }

  /** At start-up: sessions a crashed process left live on this node can never be driven again. */
  async endLiveSessionsOnNode(nodeId: string, reason: EndReason): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(
      `UPDATE sessions SET status = 'ended', end_reason = $2, ended_at = now(), updated_at = now()
       WHERE node_id = $1 AND status IN ${LIVE} RETURNING id`,
      [nodeId, reason],
    );
    return r.rows.map((row) => row.id);
  }

  /** Ids of the sessions the database lists as live on this node (for reconciliation). */
  async liveSessionIdsOnNode(nodeId: string): Promise<Set<string>> {
    const r = await this.db.query<{ id: string }>(
      `SELECT id FROM sessions WHERE node_id = $1 AND status IN ${LIVE}`,
      [nodeId],
    );
    return new Set(r.rows.map((row) => row.id));
  }

  async countLiveForKey(keyId: string): Promise<number> {
    return countLive(this.db, 'key_id', keyId);
  }

  // ---- blobs (file bytes in a shared database) -----------------------------------------------

  async putBlob(id: string, bytes: Uint8Array): Promise<void> {
    await this.db.query(
      `INSERT INTO blobs (id, bytes, created_at) VALUES ($1, $2, now())
       ON CONFLICT (id) DO UPDATE SET bytes = EXCLUDED.bytes`,
      [id, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)],
    );
  }

  async getBlob(id: string): Promise<Uint8Array | undefined> {
    const r = await this.db.query<{ bytes: Uint8Array }>('SELECT bytes FROM blobs WHERE id = $1', [
      id,
    ]);
    return r.rows[0] ? new Uint8Array(r.rows[0].bytes) : undefined;
  }

  async deleteBlob(id: string): Promise<void> {
    await this.db.query('DELETE FROM blobs WHERE id = $1', [id]);
  }
}

async function countLive(db: Queryable, column: 'key_id' | 'node_id', value: string) {
  const r = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sessions WHERE ${column} = $1 AND status IN ${LIVE}`,
    [value],
  );
  return r.rows[0]!.n;
}

/**
 * Claims a room for a key inside the caller's transaction: the claim row is locked, so creates
 * into the same room serialize here. The room is the key's unless another key has a live session
 * in it (whoever held the claim before, and rows older than the claims table, alike). Returns
 * false when it does.
 */
async function claimRoom(tx: Queryable, livekitUrl: string, room: string, keyId: string) {
  await tx.query(
    `INSERT INTO room_claims (livekit_url, room_name, key_id) VALUES ($1, $2, $3)
     ON CONFLICT (livekit_url, room_name) DO NOTHING`,
    [livekitUrl, room, keyId],
  );
  const claim = await tx.query<{ key_id: string }>(
    'SELECT key_id FROM room_claims WHERE livekit_url = $1 AND room_name = $2 FOR UPDATE',
    [livekitUrl, room],
  );
  const others = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sessions
     WHERE livekit_url = $1 AND room_name = $2 AND key_id <> $3 AND status IN ${LIVE}`,
    [livekitUrl, room, keyId],
  );
  if (others.rows[0]!.n > 0) return false;
  if (claim.rows[0]!.key_id !== keyId) {
    await tx.query('UPDATE room_claims SET key_id = $3 WHERE livekit_url = $1 AND room_name = $2', [
      livekitUrl,
      room,
      keyId,
    ]);
  }
  return true;
}
