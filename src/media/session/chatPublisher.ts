import type { Logger } from 'pino';
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

export const CHAT_TOPIC = 'lk.chat';
export const TRANSCRIPTION_TOPIC = 'lk.transcription';

/** The lk.chat payload: UTF-8 JSON, reliable. */
export interface ChatMessage {
  text: string;
  final: boolean;
  utterance_id: string;
}

interface OpenTranscript {
  writer: Promise<{ write(text: string): Promise<void>; close(): Promise<void> } | null>;
  written: string;
}

/**
 * Publishes what the avatar says, as it is heard: `lk.chat` data messages (an interim when an
 * utterance starts, interims as words are heard, one final with the heard text) and LiveKit's
 * standard `lk.transcription` text streams so LiveKit's own frontends show the transcript.
 * Messages go out in order through one chain; a failed send is logged, never thrown at the player.
 */
export class ChatPublisher {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly open = new Map<string, OpenTranscript>();
  private readonly encoder = new TextEncoder();

  /**
   * @param transcription publish `lk.transcription` too. Off when the avatar speaks for an agent
   *   (`publish_on_behalf`): the agent's own transcription output already carries the text, and
   *   frontends would show it twice.
   */
  constructor(
    private readonly room: ChatTransport,
    private readonly audioTrackSid: () => string | undefined,
    private readonly log: Logger,
    private readonly transcription = true,
  ) {}

  started(u: Utterance): void {
    this.send({ text: '', final: false, utterance_id: u.id });
    if (!this.transcription) return;
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
    if (!this.transcription) return;
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
    const data = this.encoder.encode(JSON.stringify(message));
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
