// SPDX-License-Identifier: GPL-3.0-or-later
import type pg from 'pg';
import type { Logger } from 'pino';
import { POSTGRES_CONNECT_TIMEOUT_MS, nodePostgres } from './postgresDatabase.js';

export interface NotificationHandlers {
  /** A NOTIFY on one of the channels; `payload` is '' when none was given. */
  notification(channel: string, payload: string): void;
  /**
   * Listening (again): called after the first connection and after every reconnection, since
   * notifications sent while the connection was down are lost and must be looked for.
   */
  connected(): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * LISTEN on `channels` over a dedicated connection (a pooled one would lose its LISTEN when it
 * went back to the pool), reconnecting by itself with backoff when PostgreSQL goes away and
 * LISTENing again once it is back. Resolves once listening for the first time.
 */
export async function listenForNotifications(
  url: string,
  channels: readonly string[],
  handlers: NotificationHandlers,
  log: Logger,
): Promise<NotificationListener> {
  let client: pg.Client | undefined;
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = RETRY_FIRST_MS;
  const { Client, escapeIdentifier } = await nodePostgres();

  const connect = async (): Promise<void> => {
    const c = new Client({
      connectionString: url,
      connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    c.on('notification', (n) => handlers.notification(n.channel, n.payload ?? ''));
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (client === c) client = undefined;
      void c.end().catch(() => undefined);
      if (closed) return;
      log.warn({ err: err?.message }, 'database notifications: connection lost; reconnecting');
      scheduleRetry();
    };
    c.on('error', onLost);
    c.on('end', () => onLost());
    try {
      await c.connect();
      for (const channel of channels) await c.query(`LISTEN ${escapeIdentifier(channel)}`);
    } catch (err) {
      lost = true;
      await c.end().catch(() => undefined);
      throw err;
    }
    if (closed) {
      await c.end().catch(() => undefined);
      return;
    }
    client = c;
    retryMs = RETRY_FIRST_MS;
    handlers.connected();
  };

  const scheduleRetry = () => {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => {
      if (closed) return;
      connect().then(
        () => log.info('database notifications: listening again'),
        () => {
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
          scheduleRetry();
        },
      );
    }, retryMs);
    retryTimer.unref();
  };

  await connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
