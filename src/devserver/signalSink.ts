import { SignalResponse } from '@livekit/protocol';

/** Where a participant's signal messages go: the WebSocket of its current session. */
export interface SignalSink {
  send(message: SignalResponse['message']): void;
  /** Ends the signal connection (after any message already sent). */
  close(): void;
  /** Drops the connection without a goodbye, as a network failure would. */
  terminate(): void;
}

/** A participant whose signal connection dropped has nowhere to send to until it comes back. */
export const detachedSignal: SignalSink = {
  send: () => undefined,
  close: () => undefined,
  terminate: () => undefined,
};
