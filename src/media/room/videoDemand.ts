// SPDX-License-Identifier: GPL-3.0-or-later
import { RoomEvent, TrackKind, type LocalTrack, type Room } from '@livekit/rtc-node';
import type { Logger } from 'pino';

// Reading the sender's state costs about 3 ms of CPU (rtc-node builds the whole WebRTC statistics
// report): read at 5 Hz it alone would cost an unwatched avatar 0.015 core. So it is read rarely,
// and often only for a while after something that may bring a viewer.
/**
 * While watched: a viewer leaving is acted on within this (the server itself waits 5 s before
 * it turns the video off).
 */
const WATCHED_POLL_MS = 2_000;
/**
 * While nobody watches, when nothing happens: a viewer already in the room who subscribes again
 * (the only arrival no event announces) is seen within this.
 */
const UNWATCHED_POLL_MS = 5_000;
/**
 * After a participant joined: read quickly for a while, so that a viewer who arrives gets video
 * well within a second (LocalTrackSubscribed comes for the first subscriber only, on LiveKit).
 */
const ARRIVAL_POLL_MS = 150;
const ARRIVAL_WINDOW_MS = 5_000;

/**
 * Whether anyone watches the avatar's video, as far as the app can tell. With dynacast the
 * server tells the publisher which layers anyone subscribes to (SubscribedQualityUpdate), and
 * rtc-node's Rust SDK turns the video's encoding on or off; it does not tell JavaScript. Two
 * things reach JavaScript: `LocalTrackSubscribed` (the first subscriber ever, on LiveKit) and
 * the sender's state in the session's WebRTC statistics (the outbound video stream's
 * `active`), read here on a timer, quickly for a few seconds after a participant joined the room.
 * The renderer follows: frames nobody would encode are not drawn.
 */
export class VideoDemand {
  private watched = true;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private stopped = false;
  /** Until when the state is read quickly (someone just joined the room). */
  private arrivalUntil = 0;
  private readonly onSubscribed = (track: LocalTrack): void => {
    if (track.kind === TrackKind.KIND_VIDEO) this.set(true, 'subscribed');
  };
  private readonly onParticipant = (): void => {
    this.arrivalUntil = performance.now() + ARRIVAL_WINDOW_MS;
    // A read under way schedules the next one itself.
    if (!this.watched && !this.stopped && !this.polling) {
      clearTimeout(this.timer);
      this.schedule();
    }
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
    this.room.on(RoomEvent.ParticipantConnected, this.onParticipant);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.room.off(RoomEvent.LocalTrackSubscribed, this.onSubscribed);
    this.room.off(RoomEvent.ParticipantConnected, this.onParticipant);
  }

  private schedule(): void {
    if (this.stopped) return;
    const delay = this.watched
      ? WATCHED_POLL_MS
      : performance.now() < this.arrivalUntil
        ? ARRIVAL_POLL_MS
        : UNWATCHED_POLL_MS;
    this.timer = setTimeout(() => void this.poll(), delay);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      const active = await this.videoSenderActive();
      if (active !== undefined) this.set(active, 'sender');
    } catch (err) {
      // A room being left answers no statistics: keep the current state.
      this.log.debug({ err }, 'could not read the video sender state');
    }
    this.polling = false;
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
    this.log.info({ watched, why }, 'avatar video demand changed');
    this.changed(watched);
  }
}
