// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { CHAT_TOPIC, encodeChatMessage, type ChatMessage } from '@visage-avatar/client/api';
import type { Utterance, UtteranceOutcome } from './utterance.js';

/** What the chat publisher needs of the room (rtc-node's LocalParticipant fits). */
export interface ChatTransport {
  publishData(data: Uint8Array, options: { reliable: boolean; topic: string }): Promise<void>;
  streamText(options: {
    topic: string;
    attributes: Record<string, string>;
  }): Promise<{ write(text: string): Promise<void>; close(): Promise<void> }>;
  sendText(
    text: string,
    options: { topic: string; attributes: Record<string, string> },
  ): Promise<unknown>;
}

export const TRANSCRIPTION_TOPIC = 'lk.transcription';

interface OpenTranscript {
  writer: Promise<{ write(text: string): Promise<void>; close(): Promise<void> } | null>;
  written: string;
}

/**
 * Publishes what the avatar says, as it is heard: `lk.chat` data messages (an interim when an
 * utterance starts, interims as words are heard, one final with the heard text) and LiveKit's
 * standard `lk.transcription` text streams so LiveKit's own frontends show the transcript.
 *
 * The transcription has the shape agents-js's own transcription output gives an agent's speech,
 * so LiveKit's components show it as the agent's: per utterance one delta stream
 * (`lk.transcription_final: "false"`) that grows word by word as the words are heard, then one
 * final stream (`"true"`) with exactly the heard text, both with the same `lk.segment_id` and
 * `lk.transcribed_track_id` = the avatar's audio track. Sent by the avatar participant, which
 * the components resolve to the agent through `lk.publish_on_behalf` (`useVoiceAssistant` takes
 * the avatar's audio as the agent's and reads the transcription of that track). An interrupted
 * utterance's transcript stops where the audio stopped.
 * Messages go out in order through one chain; a failed send is logged, never thrown at the player.
 */
export class ChatPublisher {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly open = new Map<string, OpenTranscript>();

  constructor(
    private readonly room: ChatTransport,
    private readonly audioTrackSid: () => string | undefined,
    private readonly log: Logger,
  ) {}

  started(u: Utterance): void {
    this.send({ text: '', final: false, utterance_id: u.id });
    const attributes = this.attributes(u, false);
    this.open.set(u.id, {
      writer: this.room
        .streamText({ topic: TRANSCRIPTION_TOPIC, attributes })
        .catch((err: unknown) => {
          this.log.warn({ err }, 'could not open the transcription stream');
          return null;
        }),
      written: '',
    });
  }

  progress(u: Utterance, heardText: string): void {
    this.send({ text: heardText, final: false, utterance_id: u.id });
    const t = this.open.get(u.id);
    if (!t || !heardText.startsWith(t.written) || heardText === t.written) return;
    const delta = heardText.slice(t.written.length);
    t.written = heardText;
    this.enqueue(async () => (await t.writer)?.write(delta));
  }

  finished(u: Utterance, outcome: UtteranceOutcome): void {
    this.send({ text: outcome.heardText, final: true, utterance_id: u.id });
    const t = this.open.get(u.id);
    this.open.delete(u.id);
    this.enqueue(async () => {
      await (await t?.writer)?.close();
      await this.room.sendText(outcome.heardText, {
        topic: TRANSCRIPTION_TOPIC,
        attributes: this.attributes(u, true),
      });
    });
  }

  /** Resolves once everything queued so far was handed to the room. */
  flushed(): Promise<unknown> {
    return this.chain;
  }

  private send(message: ChatMessage): void {
    const data = encodeChatMessage(message);
    this.enqueue(() => this.room.publishData(data, { reliable: true, topic: CHAT_TOPIC }));
  }

  private enqueue(fn: () => Promise<unknown>): void {
    this.chain = this.chain
      .then(fn)
      .catch((err: unknown) => this.log.warn({ err }, 'could not publish chat progress'));
  }

  private attributes(u: Utterance, final: boolean): Record<string, string> {
    const attributes: Record<string, string> = {
      'lk.segment_id': u.id,
      'lk.transcription_final': String(final),
    };
    const sid = this.audioTrackSid();
    if (sid) attributes['lk.transcribed_track_id'] = sid;
    return attributes;
  }
}
