// SPDX-License-Identifier: GPL-3.0-or-later
import { SpeakerInfo, SpeakersChanged } from '@livekit/protocol';
import type { Participant } from './participant.js';

const UPDATE_INTERVAL_MS = 500;

/**
 * Active speaker detection for one room: every half second, the participants whose audio is
 * loud enough; when that set changes, everyone gets SpeakersChanged (new speakers with their
 * level, those who stopped with `active: false`), which SDKs turn into ActiveSpeakersChanged.
 */
export class ActiveSpeakers {
  private readonly participants: () => Iterable<Participant>;
  private speaking = new Map<string, number>();
  private timer?: NodeJS.Timeout;

  constructor(participants: () => Iterable<Participant>) {
    this.participants = participants;
  }

  start(): void {
    this.timer ??= setInterval(() => this.update(), UPDATE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  update(now = Date.now()): void {
    const current = new Map<string, number>();
    const everyone = [...this.participants()];
    for (const participant of everyone) {
      if (participant.isDisconnected || participant.hidden) continue;
      let level = 0;
      for (const track of participant.tracks.values()) {
        if (!track.isVideo && !track.info.muted)
          level = Math.max(level, track.audioLevel.level(now));
      }
      if (level > 0) current.set(participant.sid, level);
    }
    const changed =
      current.size !== this.speaking.size ||
      [...current.keys()].some((sid) => !this.speaking.has(sid));
    if (!changed) {
      this.speaking = current;
      return;
    }
    const speakers = [
      ...[...current]
        .sort((a, b) => b[1] - a[1])
        .map(([sid, level]) => new SpeakerInfo({ sid, level, active: true })),
      ...[...this.speaking.keys()]
        .filter((sid) => !current.has(sid))
        .map((sid) => new SpeakerInfo({ sid, level: 0, active: false })),
    ];
    this.speaking = current;
    const message = new SpeakersChanged({ speakers });
    for (const participant of everyone)
      participant.send({ case: 'speakersChanged', value: message });
  }
}
