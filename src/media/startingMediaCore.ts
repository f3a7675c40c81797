// SPDX-License-Identifier: GPL-3.0-or-later
import {
  MediaUnavailableError,
  type MediaCore,
  type MediaSession,
  type MediaSessionObserver,
  type MediaSessionSpec,
} from './mediaCore.js';

/**
 * A media core still starting, usable at once: a session started before it is ready waits for
 * it, and one started after it failed is refused (`MediaUnavailableError`). A node listens
 * while its media processes load their code and draw their avatars (seconds of CPU on a small
 * machine), so that the API, the database and the LiveKit server are not slowed by them; the
 * first session pays the rest of the wait, if it comes that early.
 */
export class StartingMediaCore implements MediaCore {
  private core: MediaCore | undefined;
  private failure: Error | undefined;
  private readonly settled: Promise<MediaCore | undefined>;

  constructor(
    readonly kind: string,
    starting: Promise<MediaCore>,
  ) {
    this.settled = starting.then(
      (core) => (this.core = core),
      (err: unknown) => {
        this.failure = err instanceof Error ? err : new Error(String(err));
        return undefined;
      },
    );
  }

  /** `ready` once started, `failed` if it could not start, `starting` until then. */
  get state(): 'starting' | 'ready' | 'failed' {
    return this.core ? 'ready' : this.failure ? 'failed' : 'starting';
  }

  whenStarted(): Promise<void> {
    return this.settled.then(() => undefined);
  }

  /** Resolves when it has started; rejects with the reason it could not. */
  async ready(): Promise<MediaCore> {
    const core = await this.settled;
    if (!core) throw this.failure!;
    return core;
  }

  async start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession> {
    const core = await this.settled;
    if (!core) {
      // The reason goes to the node's log (runtime.ts), not into an API answer.
      throw new MediaUnavailableError('the media processes failed to start', {
        cause: this.failure,
      });
    }
    return core.start(spec, observer);
  }

  /**
   * The running sessions: none before it is ready (a session waiting for it in `start` is not
   * running yet, as with any core until its `start` is called).
   */
  running(): ReadonlyMap<string, MediaSession> {
    return this.core?.running() ?? new Map();
  }

  /** Waits for a start under way, then closes what started. */
  async close(): Promise<void> {
    await (await this.settled)?.close();
  }
}
