// SPDX-License-Identifier: GPL-3.0-or-later
// A media core for the plugin tests that need no WebRTC: it plays each utterance on a wall
// clock (a fixed time per character) and reports progress exactly as the media core's lk.chat
// contract says (an interim when an utterance starts, interims as words are heard, one final
// per utterance: the whole text, or only the heard part when cut), as data packets into the
// stand-in room of the session. The real Visage server drives it through the MediaCore seam.
import { EventEmitter } from 'node:events';
import { DataPacketKind, RoomEvent } from '@livekit/rtc-node';
import type {
  InterruptOutcome,
  MediaCore,
  MediaSession,
  MediaSessionObserver,
  MediaSessionSpec,
  SpeechItem,
} from '../../src/media/mediaCore.js';

/** What a test can observe of one simulated avatar. */
export interface AvatarLogEntry {
  at: number;
  event: 'speak' | 'start' | 'final' | 'interrupt' | 'waiting' | 'close';
  text?: string;
  utteranceId?: string;
  waiting?: boolean;
  interrupted?: boolean;
}

/**
 * The room as the plugin sees it without WebRTC: a name, the agent's local identity, the
 * DataReceived events the avatar's packets arrive as, and no remote participant's tracks (the
 * simulated avatar publishes none).
 */
export class StandInRoom extends EventEmitter {
  readonly isConnected = false;
  readonly localParticipant: { identity: string };
  readonly remoteParticipants = new Map<string, never>();

  constructor(
    readonly name: string,
    agentIdentity: string,
  ) {
    super();
    this.localParticipant = { identity: agentIdentity };
  }
}

export class SimulatedAvatarMedia implements MediaCore {
  readonly kind = 'simulated';
  readonly rooms = new Map<string, StandInRoom>();
  readonly sessions = new Map<string, SimulatedAvatar>();
  msPerChar: number;

  constructor(options: { msPerChar?: number } = {}) {
    this.msPerChar = options.msPerChar ?? 20;
  }

  /** A room the plugin can be started in; the avatar of a session in it talks into it. */
  room(name: string, agentIdentity = 'agent-under-test'): StandInRoom {
    const room = new StandInRoom(name, agentIdentity);
    this.rooms.set(name, room);
    return room;
  }

  async start(spec: MediaSessionSpec, observer: MediaSessionObserver): Promise<MediaSession> {
    const avatar = new SimulatedAvatar(spec, observer, this);
    this.sessions.set(spec.sessionId, avatar);
    return avatar;
  }

  running(): ReadonlyMap<string, MediaSession> {
    return new Map([...this.sessions].filter(([, avatar]) => !avatar.closed));
  }

  async close(): Promise<void> {}
}

export class SimulatedAvatar implements MediaSession {
  readonly log: AvatarLogEntry[] = [];
  /** Drops every lk.chat packet, as a broken data channel would. */
  muted = false;
  /**
   * The avatar stops this long (ms) after an interrupt is answered, speaking on meanwhile, as on
   * a busy machine: its final then carries more than the agent had seen when it interrupted.
   */
  interruptLagMs = 0;
  readonly #queue: SpeechItem[] = [];
  #current?: { item: SpeechItem; words: string[]; heard: number; timer: NodeJS.Timeout };
  #waiting = false;
  #closed = false;

  constructor(
    readonly spec: MediaSessionSpec,
    private readonly observer: MediaSessionObserver,
    private readonly media: SimulatedAvatarMedia,
  ) {}

  get speaking(): boolean {
    return this.#current !== undefined;
  }

  get waiting(): boolean {
    return this.#waiting;
  }

  get closed(): boolean {
    return this.#closed;
  }

  speak(item: SpeechItem): void {
    this.#note({ event: 'speak', text: item.text, utteranceId: item.utteranceId });
    this.#queue.push(item);
    this.#next();
  }

  playAudio(): void {
    throw new Error('the simulated avatar plays no audio');
  }

  interrupt(): InterruptOutcome {
    const dropped = this.#queue.splice(0).length;
    const current = this.#current;
    this.#note({ event: 'interrupt', interrupted: current !== undefined });
    const stop = () => {
      const playing = this.#current;
      if (!playing) return;
      clearTimeout(playing.timer);
      this.#current = undefined;
      this.#send(playing.item, playing.words.slice(0, playing.heard).join(' '), true);
      this.observer.speakingChanged(false);
    };
    if (this.interruptLagMs > 0) setTimeout(stop, this.interruptLagMs);
    else stop();
    return { interrupted: current !== undefined, droppedUtterances: dropped };
  }

  setWaiting(waiting: boolean): void {
    this.#waiting = waiting;
    this.#note({ event: 'waiting', waiting });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#queue.length = 0;
    if (this.#current) clearTimeout(this.#current.timer);
    this.#current = undefined;
    this.#closed = true;
    this.#note({ event: 'close' });
  }

  /** Heard text of every final sent, in order. */
  finals(): string[] {
    return this.log.filter((e) => e.event === 'final').map((e) => e.text ?? '');
  }

  #next(): void {
    if (this.#current || this.#closed) return;
    const item = this.#queue.shift();
    if (!item) return;
    const words = item.text.split(/\s+/).filter(Boolean);
    this.#note({ event: 'start', text: item.text, utteranceId: item.utteranceId });
    this.observer.speakingChanged(true);
    this.#send(item, '', false);
    const step = () => {
      const current = this.#current!;
      current.heard++;
      if (current.heard >= words.length) {
        this.#current = undefined;
        this.#send(item, item.text, true);
        this.observer.speakingChanged(false);
        this.#next();
        return;
      }
      this.#send(item, words.slice(0, current.heard).join(' '), false);
      current.timer = setTimeout(step, this.#wordMs(words[current.heard]!));
    };
    this.#current = { item, words, heard: 0, timer: setTimeout(step, this.#wordMs(words[0]!)) };
  }

  #wordMs(word: string): number {
    return (word.length + 1) * this.media.msPerChar;
  }

  #send(item: SpeechItem, text: string, final: boolean): void {
    if (final) this.#note({ event: 'final', text, utteranceId: item.utteranceId });
    const room = this.media.rooms.get(this.spec.roomName);
    if (!room || this.muted) return;
    const payload = new TextEncoder().encode(
      JSON.stringify({ text, final, utterance_id: item.utteranceId }),
    );
    room.emit(
      RoomEvent.DataReceived,
      payload,
      { identity: this.spec.agentIdentity },
      DataPacketKind.KIND_RELIABLE,
      'lk.chat',
    );
  }

  #note(entry: Omit<AvatarLogEntry, 'at'>): void {
    this.log.push({ at: Date.now(), ...entry });
  }
}
