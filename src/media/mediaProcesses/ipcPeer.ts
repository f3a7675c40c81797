// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Requests, replies and one-way events over a message channel between two processes (a child's
 * IPC channel, `process` inside the child). Messages keep their order on the channel, so events
 * and requests sent one after another arrive one after another.
 */

/** What the peer needs from the channel: Node's `ChildProcess` and `process` both fit. */
export interface IpcChannel {
  /** With a callback, a failed send reports there instead of as an 'error' event. */
  send(message: unknown, callback: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A request's failure as it crosses the channel: the error's class name and message. */
export interface WireError {
  name: string;
  message: string;
}

type Message =
  | { k: 'req'; id: number; op: string; body: unknown }
  | { k: 'res'; id: number; ok: true; body: unknown }
  | { k: 'res'; id: number; ok: false; error: WireError }
  | { k: 'evt'; op: string; body: unknown };

/** The other side answered a request with an error. */
export class RemoteError extends Error {
  constructor(readonly remote: WireError) {
    super(remote.message);
    this.name = 'RemoteError';
  }
}

/** The channel closed before the reply came. */
export class ChannelClosedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ChannelClosedError';
  }
}

type Handler = (body: unknown) => unknown;

export class IpcPeer {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(body: unknown): void; reject(err: Error): void }
  >();
  private readonly requestHandlers = new Map<string, Handler>();
  private readonly eventHandlers = new Map<string, Handler>();
  private closedReason: string | undefined;
  private readonly listener = (message: unknown) => this.receive(message as Message);

  constructor(private readonly channel: IpcChannel) {
    channel.on('message', this.listener);
  }

  /** Sends a request and resolves with the other side's answer. */
  request<T = unknown>(op: string, body: unknown = null): Promise<T> {
    if (this.closedReason) return Promise.reject(new ChannelClosedError(this.closedReason));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (body: unknown) => void, reject });
      this.post({ k: 'req', id, op, body });
    });
  }

  /** Sends a one-way event. Dropped silently once the channel is closed. */
  emit(op: string, body: unknown = null): void {
    if (!this.closedReason) this.post({ k: 'evt', op, body });
  }

  /** Answers requests named `op`; a thrown error (or rejection) is sent back as a WireError. */
  handle(op: string, handler: (body: never) => unknown): void {
    this.requestHandlers.set(op, handler as Handler);
  }

  /** Receives events named `op`. */
  on(op: string, handler: (body: never) => void): void {
    this.eventHandlers.set(op, handler as Handler);
  }

  /** Rejects every pending request and ignores what arrives from now on. */
  close(reason: string): void {
    if (this.closedReason) return;
    this.closedReason = reason;
    this.channel.off('message', this.listener);
    for (const { reject } of this.pending.values()) reject(new ChannelClosedError(reason));
    this.pending.clear();
  }

  private post(message: Message): void {
    // The channel may go away under us (the other process died): everything pending fails.
    const lost = (err: Error) => this.close(`the channel is closed: ${err.message}`);
    try {
      this.channel.send(message, (err) => err && lost(err));
    } catch (err) {
      lost(err as Error);
    }
  }

  private receive(message: Message): void {
    if (this.closedReason || typeof message !== 'object' || message === null) return;
    switch (message.k) {
      case 'evt':
        this.eventHandlers.get(message.op)?.(message.body);
        return;
      case 'res': {
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if (message.ok) waiting.resolve(message.body);
        else waiting.reject(new RemoteError(message.error));
        return;
      }
      case 'req':
        void this.answer(message);
        return;
    }
  }

  private async answer(message: { id: number; op: string; body: unknown }): Promise<void> {
    const handler = this.requestHandlers.get(message.op);
    try {
      if (!handler) throw new Error(`no handler for ${message.op}`);
      const body = await handler(message.body);
      if (!this.closedReason) this.post({ k: 'res', id: message.id, ok: true, body: body ?? null });
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (!this.closedReason) {
        this.post({
          k: 'res',
          id: message.id,
          ok: false,
          error: { name: error.name, message: error.message },
        });
      }
    }
  }
}
