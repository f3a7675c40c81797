/**
 * The schema, in plain PostgreSQL so that the embedded PGlite and a production PostgreSQL share it.
 * Migrations are append-only: add a new entry, never edit an applied one.
 */
export const MIGRATIONS: readonly string[] = [
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
];

export const SCHEMA_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)`;
