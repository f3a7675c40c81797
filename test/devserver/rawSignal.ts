// SPDX-License-Identifier: GPL-3.0-or-later
// A signal connection opened by hand, without an SDK: to see exactly what the server sends.
import { setTimeout as sleep } from 'node:timers/promises';
import { SignalResponse } from '@livekit/protocol';
import WebSocket from 'ws';

/** Opens a WebSocket and resolves with the upgrade's HTTP status (101 when accepted). */
export function upgradeStatus(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; ws?: WebSocket; messages: SignalResponse[] }>(
    (resolve) => {
      const ws = new WebSocket(url, { headers });
      // Attached before 'open': the JoinResponse can arrive in the same chunk as the upgrade.
      const messages: SignalResponse[] = [];
      ws.on('message', (data: Buffer) => messages.push(SignalResponse.fromBinary(data)));
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, messages }));
      });
      ws.on('open', () => resolve({ status: 101, body: '', ws, messages }));
      ws.on('error', () => undefined);
    },
  );
}

/** The first message of `kind` received on a raw signal connection (5 s at most). */
export async function waitForMessage(
  messages: SignalResponse[],
  kind: SignalResponse['message']['case'],
) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = messages.find((m) => m.message.case === kind);
    if (found) return found.message.value;
    if (Date.now() > deadline) throw new Error(`no ${kind}`);
    await sleep(20);
  }
}
