import { RoomEvent, TrackKind, type LocalTrack, type Room } from '@livekit/rtc-node';
import type { Logger } from 'pino';

/**
 * How often the sender's state is read while the video is watched: a viewer leaving is acted on
 * within this (the server itself waits 5 s before it turns the video off).
 */
const WATCHED_POLL_MS = 1_000;
/**
 * While nobody watches: a viewer who arrives after the first one (LocalTrackSubscribed comes
 * once per track on LiveKit) is seen within this, well inside the 1 s the viewer's first frame
 * may take. One read costs about a tenth of a millisecond of this process.
 */
const UNWATCHED_POLL_MS = 200;

/**
 * Whether anyone watches the avatar's video, as far as the app can tell. With dynacast the
 * server tells the publisher which layers anyone subscribes to (SubscribedQualityUpdate), and
 * rtc-node's Rust SDK turns the video's encoding on or off; it does not tell JavaScript. Two
 * things reach JavaScript: `LocalTrackSubscribed` (the first subscriber ever, on LiveKit) and
 * the sender's state in the session's WebRTC statistics (the outbound video stream's
 * `active`), read here on a timer. The renderer follows: frames nobody would encode are not
 * drawn.
 */
export class VideoDemand {
  private watched = true;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly onSubscribed = (track: LocalTrack): void => {
    if (track.kind === TrackKind.KIND_VIDEO) this.set(true, 'subscribed');
  };

  constructor(
    private readonly room: Room,
    private readonly changed: (watched: boolean) => void,
    private readonly log: Logger,
  ) {}

  get isWatched(): boolean {
    return this.watched;
  }

  start(): void {
    this.room.on(RoomEvent.LocalTrackSubscribed, this.onSubscribed);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.room.off(RoomEvent.LocalTrackSubscribed, this.onSubscribed);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => void this.poll(),
      this.watched ? WATCHED_POLL_MS : UNWATCHED_POLL_MS,
    );
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    try {
      const active = await this.videoSenderActive();
      if (active !== undefined) this.set(active, 'sender');
    } catch (err) {
      // A room being left answers no statistics: keep the current state.
      this.log.debug({ err }, 'could not read the video sender state');
    }
    this.schedule();
  }

  /** The outbound video stream's `active`, or undefined before it exists (nothing sent yet). */
  private async videoSenderActive(): Promise<boolean | undefined> {
    if (this.stopped || !this.room.isConnected) return undefined;
    const stats = await this.room.getRtcStats();
    let active: boolean | undefined;
    for (const entry of stats.publisherStats) {
      const s = entry.stats;
      if (s.case !== 'outboundRtp' || s.value.stream?.kind !== 'video') continue;
      const layer = s.value.outbound?.active;
      // Simulcast: watched while any layer is on.
      if (layer !== undefined) active = (active ?? false) || layer;
    }
    return active;
  }

  private set(watched: boolean, why: string): void {
    if (this.stopped || watched === this.watched) return;
    this.watched = watched;
    this.log.debug({ watched, why }, 'avatar video demand changed');
    this.changed(watched);
  }
}
