// SPDX-License-Identifier: GPL-3.0-or-later
import { RoomEvent, type Participant, type RemoteParticipant, type Room } from '@livekit/rtc-node';
import type { Logger } from 'pino';
import type { ConversationCue } from '../render/index.js';
import type { TranscriptionUpdate } from './transcriptionStreams.js';

/** The participant attribute LiveKit agents keep their state in (agents-js `RoomIO`). */
export const AGENT_STATE_ATTRIBUTE = 'lk.agent.state';
const TRANSCRIPTION_FINAL = 'lk.transcription_final';
const TRANSCRIBED_TRACK = 'lk.transcribed_track_id';

/**
 * What an agent's avatar reads from the room for its listening life: the agent's
 * `lk.agent.state` attribute (agents-js and the Python agents set it on the agent's participant:
 * `initializing`, `listening`, `thinking`, `speaking`), and the user's questions, from the final
 * segments of the user's transcript that the agent publishes on `lk.transcription` (a final
 * segment ending in a question mark, while the agent is not speaking, that transcribes neither
 * the agent's nor the avatar's own audio).
 *
 * The end of the user's turn is the agent going from `listening` to `thinking`, counted here as
 * the change arrives (a `thinking` shorter than a frame is not missed).
 *
 * `cue()` is read by every frame: one object, updated in place.
 */
export class AgentStateWatcher {
  private readonly current: {
    agentState: string | undefined;
    questions: number;
    turnsEnded: number;
  } = { agentState: undefined, questions: 0, turnsEnded: 0 };

  private room: Room | undefined;
  private ownTrackSids: () => readonly string[] = () => [];

  constructor(
    private readonly agentIdentity: string,
    private readonly log: Logger,
  ) {}

  cue(): ConversationCue {
    return this.current;
  }

  /**
   * Listens to `room` (before it connects, so that no change is missed). Transcripts come
   * through `transcript`.
   */
  attach(room: Room, ownTrackSids: () => readonly string[]): void {
    room.on(
      RoomEvent.ParticipantAttributesChanged,
      (changed: Record<string, string>, p: Participant) => {
        if (p.identity === this.agentIdentity && AGENT_STATE_ATTRIBUTE in changed) {
          this.set(changed[AGENT_STATE_ATTRIBUTE]);
        }
      },
    );
    room.on(RoomEvent.ParticipantConnected, (p: RemoteParticipant) => {
      if (p.identity === this.agentIdentity) this.set(p.attributes[AGENT_STATE_ATTRIBUTE]);
    });
    room.on(RoomEvent.ParticipantDisconnected, (p: RemoteParticipant) => {
      if (p.identity === this.agentIdentity) this.set(undefined);
    });
    this.room = room;
    this.ownTrackSids = ownTrackSids;
  }

  /** A whole `lk.transcription` stream (see `listenToTranscriptions`). */
  transcript(update: TranscriptionUpdate): void {
    const { attributes, text } = update;
    const room = this.room;
    if (!room || attributes[TRANSCRIPTION_FINAL] !== 'true') return;
    if (this.current.agentState === 'speaking') return;
    const track = attributes[TRANSCRIBED_TRACK];
    const agent = room.remoteParticipants.get(this.agentIdentity);
    const agentTracks = agent ? [...agent.trackPublications.keys()] : [];
    if (track !== undefined && [...this.ownTrackSids(), ...agentTracks].includes(track)) return;
    if (!isQuestion(text)) return;
    this.current.questions++;
    this.log.debug({ questions: this.current.questions }, 'the user asked a question');
  }

  /** After the join: the agent may have set its state before the avatar came. */
  joined(room: Room): void {
    const agent = room.remoteParticipants.get(this.agentIdentity);
    if (agent) this.set(agent.attributes[AGENT_STATE_ATTRIBUTE]);
  }

  private set(state: string | undefined): void {
    const next = state === '' ? undefined : state;
    const from = this.current.agentState;
    if (next === from) return;
    this.log.debug({ from, to: next }, 'agent state');
    // The agent decided the user's turn is over and works on the reply.
    if (from === 'listening' && next === 'thinking') this.current.turnsEnded++;
    this.current.agentState = next;
  }
}

/** A transcript segment that asks something: it ends in a question mark (Latin, CJK or Arabic). */
export function isQuestion(text: string): boolean {
  return /[?\uFF1F\u061F]["'\u00BB\u201D)\s]*$/u.test(text);
}
