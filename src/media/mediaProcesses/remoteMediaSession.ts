// SPDX-License-Identifier: GPL-3.0-or-later
import type {
  AudioItem,
  InterruptOutcome,
  MediaSession,
  MediaSessionObserver,
  MediaSessionSpec,
  SpeechItem,
} from '../mediaCore.js';
import type { MediaProcessHandle } from './mediaProcessHandle.js';
import type { AudioEvent, SessionRef, SpeakEvent, WaitingEvent } from './mediaProcessProtocol.js';

/**
 * A media session that runs in a media process, seen from the API process. Calls become
 * messages on the process's channel, in the order they are made; `speaking` follows the process's
 * `speaking` events.
 */
export class RemoteMediaSession implements MediaSession {
  speaking = false;
  private closing: Promise<void> | undefined;

  constructor(
    /** What the session was started with (where its avatar is, should its process die). */
    readonly spec: MediaSessionSpec,
    readonly handle: MediaProcessHandle,
    private readonly observer: MediaSessionObserver,
    private readonly released: (session: RemoteMediaSession) => void,
  ) {}

  get sessionId(): string {
    return this.spec.sessionId;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  speak(item: SpeechItem): void {
    this.handle.peer.emit('speak', { sessionId: this.sessionId, item } satisfies SpeakEvent);
  }

  playAudio(item: AudioItem): void {
    this.handle.peer.emit('audio', { sessionId: this.sessionId, item } satisfies AudioEvent);
  }

  async interrupt(): Promise<InterruptOutcome> {
    const ref: SessionRef = { sessionId: this.sessionId };
    // A process that is gone plays nothing any more (and its session is ending).
    return this.handle.peer
      .request<InterruptOutcome>('interrupt', ref)
      .catch(() => ({ interrupted: false, droppedUtterances: 0 }));
  }

  setWaiting(waiting: boolean): void {
    this.handle.peer.emit('waiting', { sessionId: this.sessionId, waiting } satisfies WaitingEvent);
  }

  close(): Promise<void> {
    this.closing ??= this.handle.peer
      .request('close', { sessionId: this.sessionId } satisfies SessionRef)
      .then(
        () => undefined,
        () => undefined, // the process is gone: nothing left to close
      )
      .finally(() => this.released(this));
    return this.closing;
  }

  /** From the process: speech started or stopped. */
  speakingChanged(speaking: boolean): void {
    this.speaking = speaking;
    if (!this.closed) this.observer.speakingChanged(speaking);
  }

  /** From the process, or because the process died: the session must end. */
  ended(reason: Parameters<MediaSessionObserver['ended']>[0], detail: string): void {
    this.speaking = false;
    if (!this.closed) this.observer.ended(reason, detail);
  }
}
