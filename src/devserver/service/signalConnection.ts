// SPDX-License-Identifier: GPL-3.0-or-later
import { SignalResponse } from '@livekit/protocol';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { SignalSink } from './signalSink.js';

/** A participant's signal WebSocket: binary protobuf SignalResponse frames out. */
export class SignalConnection implements SignalSink {
  private readonly ws: WebSocket;
  private readonly log: Logger;

  constructor(ws: WebSocket, log: Logger) {
    this.ws = ws;
    this.log = log;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(message: SignalResponse['message']): void {
    if (!this.isOpen) return;
    this.ws.send(new SignalResponse({ message }).toBinary(), (err) => {
      if (err) this.log.debug({ err, message: message.case }, 'signal send failed');
    });
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.close();
    }
  }

  /** Drops the connection without a close handshake, as a network failure would. */
  terminate(): void {
    this.ws.terminate();
  }
}
