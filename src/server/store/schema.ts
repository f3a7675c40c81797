// SPDX-License-Identifier: GPL-3.0-or-later
import type { Migration } from './migrate.js';

/**
 * The schema, in plain PostgreSQL so that the embedded PGlite and a production PostgreSQL share it.
 * Migrations are append-only: add a new entry, never edit an applied one. Entry n is version n
 * in `schema_migrations` (as every database made since the first release records it). Each runs
 * as one script in its own transaction (migrate.ts), so it may hold any SQL, `DO $$ … $$` blocks
 * included.
 */
const SCRIPTS: readonly string[] = [
  `
  CREATE TABLE api_keys (
    id text PRIMARY KEY,
    name text NOT NULL,
    secret_hash text NOT NULL UNIQUE,
    secret_hint text NOT NULL,
    concurrency_cap integer NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  );
  CREATE TABLE files (
    id text PRIMARY KEY,
    seq bigserial UNIQUE,
    key_id text NOT NULL REFERENCES api_keys(id),
    filename text NOT NULL,
    content_type text NOT NULL,
    bytes integer NOT NULL,
    duration_ms integer NOT NULL,
    format text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE TABLE voices (
    id text PRIMARY KEY,
    seq bigserial UNIQUE,
    key_id text NOT NULL REFERENCES api_keys(id),
    name text NOT NULL,
    file_id text,
    source_url text,
    duration_ms integer NOT NULL,
    profile jsonb,
    created_at timestamptz NOT NULL
  );
  CREATE TABLE sessions (
    id text PRIMARY KEY,
    seq bigserial UNIQUE,
    key_id text NOT NULL REFERENCES api_keys(id),
    node_id text NOT NULL,
    status text NOT NULL,
    avatar_id text NOT NULL,
    voice_id text NOT NULL,
    mode text NOT NULL,
    transport text NOT NULL,
    livekit_url text NOT NULL,
    room_name text NOT NULL,
    agent_identity text NOT NULL,
    publish_on_behalf text,
    idle_timeout_seconds integer NOT NULL,
    max_duration_seconds integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    ended_at timestamptz,
    end_reason text
  );
  CREATE INDEX sessions_key_status ON sessions (key_id, status);
  CREATE INDEX sessions_node_status ON sessions (node_id, status);
  `,
  // Rooms belong to keys: one row per room, locked while a session is inserted into it, so two
  // keys creating into the same room concurrently cannot both get it.
  `
  CREATE TABLE room_claims (
    livekit_url text NOT NULL,
    room_name text NOT NULL,
    key_id text NOT NULL REFERENCES api_keys(id),
    PRIMARY KEY (livekit_url, room_name)
  );
  CREATE INDEX sessions_room_status ON sessions (livekit_url, room_name, status);
  `,
  // Deleting a file or a voice leaves a tombstone, so that a second DELETE is still a 204.
  `
  ALTER TABLE files ADD COLUMN deleted_at timestamptz;
  ALTER TABLE voices ADD COLUMN deleted_at timestamptz;
  `,
  // The engine that made each voice (it keeps speaking it whatever the server default is).
  `ALTER TABLE voices ADD COLUMN engine text NOT NULL DEFAULT 'espeak'`,
  // File bytes (uploaded clips, voice data) when the store is a shared PostgreSQL server, so that
  // every node reads them; the embedded store keeps them on disk (see FileStorage).
  `
  CREATE TABLE blobs (
    id text PRIMARY KEY,
    bytes bytea NOT NULL,
    created_at timestamptz NOT NULL
  );
  `,
  // Every avatar, stock ones included (seeded at start from the catalogue, key_id NULL), so
  // that one lookup serves both. A photo avatar's picture, build and preview are blobs of the
  // file storage. Deleting leaves a tombstone (a second DELETE is still a 204).
  `
  CREATE TABLE avatars (
    id text PRIMARY KEY,
    seq bigserial UNIQUE,
    key_id text REFERENCES api_keys(id),
    name text NOT NULL,
    description text,
    source text NOT NULL,
    default_voice_id text NOT NULL,
    design text,
    image_blob_id text,
    build_blob_id text,
    preview_blob_id text,
    created_at timestamptz NOT NULL,
    deleted_at timestamptz
  );
  CREATE INDEX avatars_key_seq ON avatars (key_id, seq);
  `,
  // Several nodes on one PostgreSQL (cluster.ts): the nodes with their heartbeat and load (where
  // sessions are placed), the driving calls a node hands to the node that runs the session, and
  // whether a session's LiveKit is the caller's (no participant tokens for it, on any node).
  `
  CREATE TABLE cluster_nodes (
    id text PRIMARY KEY,
    instance text NOT NULL,
    capacity integer NOT NULL,
    running integer NOT NULL DEFAULT 0,
    draining boolean NOT NULL DEFAULT false,
    started_at timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL
  );
  CREATE TABLE session_commands (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    session_id text NOT NULL,
    node_id text NOT NULL,
    reply_node text NOT NULL,
    kind text NOT NULL,
    body jsonb NOT NULL,
    bytes bytea,
    state text NOT NULL DEFAULT 'pending',
    reply jsonb,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX session_commands_by_node ON session_commands (node_id, state, seq);
  ALTER TABLE sessions ADD COLUMN caller_livekit boolean NOT NULL DEFAULT false;
  `,
  // A node whose media processes are still starting is placed on last (cluster.ts): a session
  // there would wait for them.
  `
  ALTER TABLE cluster_nodes ADD COLUMN media_ready boolean NOT NULL DEFAULT true;
  `,
  // Secrets the service makes for itself (serverSecrets.ts), e.g. the key that signs atlas URLs:
  // one row each, made by the first node that needs it, so every node of a cluster signs alike.
  `
  CREATE TABLE server_secrets (
    name text PRIMARY KEY,
    secret text NOT NULL,
    created_at timestamptz NOT NULL
  );
  `,
];

export const MIGRATIONS: readonly Migration[] = SCRIPTS.map((sql, i) => ({ version: i + 1, sql }));
