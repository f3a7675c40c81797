// SPDX-License-Identifier: GPL-3.0-or-later
import { RpcError, type Room } from '@livekit/rtc-node';
import type { Logger } from 'pino';
import { ID_PREFIXES, newId } from '@visage-avatar/client/api';
import type { SpeechPlayer } from './speechPlayer.js';
import { ReplyTranscripts } from './replyTranscripts.js';
import type { TranscriptionUpdate } from './transcriptionStreams.js';
import { streamedUtterance, type WordsShaping } from './utteranceSources.js';

/**
 * The receiving side of LiveKit's standard avatar protocol, which agents-js and the Python agents
 * speak (`voice.DataStreamAudioOutput`): the agent streams its TTS audio as a byte stream on
 * `lk.audio_stream` (attributes `sample_rate`, `num_channels`; one stream per segment, 16-bit
 * PCM), calls RPC `lk.clear_buffer` to interrupt, and we call `lk.playback_started` and
 * `lk.playback_finished` ({ playback_position, interrupted, synchronized_transcript }) back.
 * Every segment gets exactly one `lk.playback_finished`, dropped ones included.
 *
 * Only the agent the avatar speaks for (the session's `publish_on_behalf`) may drive it: anyone
 * else in the room (a viewer joined with the participant token) gets an RPC error, and a stream
 * from them is drained unplayed; both are logged with the sender. A session speaking for no agent
 * accepts the protocol from nobody.
 *
 * The agent's transcript of its reply (`lk.transcription` segments from the agent that transcribe
 * no one else's track) shapes the mouth when `shaping` is given: each audio stream is paired with
 * a segment (`ReplyTranscripts`) and the words are aligned to its audio (`WordsAlignment`).
 */
export const AUDIO_STREAM_TOPIC = 'lk.audio_stream';
export const RPC_CLEAR_BUFFER = 'lk.clear_buffer';
export const RPC_PLAYBACK_STARTED = 'lk.playback_started';
export const RPC_PLAYBACK_FINISHED = 'lk.playback_finished';

export function attachAvatarProtocol(
  room: Room,
  player: SpeechPlayer,
  agentIdentity: string | null,
  log: Logger,
  shaping?: WordsShaping,
): { transcript(update: TranscriptionUpdate): void } {
  const local = room.localParticipant!;
  const replies = new ReplyTranscripts();
  const allowed = (identity: string) => agentIdentity !== null && identity === agentIdentity;
  const refuse = (identity: string, what: string) =>
    log.warn(
      { sender: identity, speaks_for: agentIdentity, what },
      'avatar protocol refused: only the agent the avatar speaks for may drive it',
    );
  const rpc = (identity: string, method: string, payload: string) =>
    local
      .performRpc({ destinationIdentity: identity, method, payload, responseTimeout: 5_000 })
      .catch((err: unknown) => log.warn({ err, method, identity }, 'avatar protocol RPC failed'));

  room.registerByteStreamHandler(AUDIO_STREAM_TOPIC, (reader, { identity }) => {
    if (!allowed(identity)) {
      refuse(identity, AUDIO_STREAM_TOPIC);
      void drain(reader);
      return;
    }
    const attrs = reader.info.attributes ?? {};
    const sampleRate = Number(attrs.sample_rate ?? 48_000);
    const channels = Number(attrs.num_channels ?? 1);
    if (!(sampleRate >= 8_000 && sampleRate <= 96_000) || !(channels >= 1 && channels <= 8)) {
      log.warn({ identity, sampleRate, channels }, 'lk.audio_stream with unusable attributes');
      return;
    }
    const id = newId(ID_PREFIXES.utterance);
    log.debug({ identity, utterance_id: id, sampleRate, channels }, 'agent audio stream');
    const words = shaping ? { transcript: replies.claim(), shaping } : undefined;
    player.enqueue(
      streamedUtterance(
        id,
        monoPcm(reader, channels),
        sampleRate,
        {
          onStarted: () => void rpc(identity, RPC_PLAYBACK_STARTED, '{}'),
          onFinished: (o) => {
            if (words) replies.release(words.transcript);
            void rpc(
              identity,
              RPC_PLAYBACK_FINISHED,
              JSON.stringify({
                playback_position: o.playedMs / 1000,
                interrupted: o.interrupted,
                synchronized_transcript: null,
              }),
            );
          },
        },
        words,
      ),
    );
  });

  local.registerRpcMethod(RPC_CLEAR_BUFFER, async (data) => {
    if (!allowed(data.callerIdentity)) {
      refuse(data.callerIdentity, RPC_CLEAR_BUFFER);
      throw new RpcError(
        RpcError.ErrorCode.APPLICATION_ERROR,
        'not allowed: only the agent this avatar speaks for may call lk.clear_buffer',
      );
    }
    const r = player.interrupt();
    replies.clear();
    log.debug({ caller: data.callerIdentity, ...r }, 'lk.clear_buffer');
    return 'ok';
  });

  return {
    transcript(update) {
      if (!shaping || !allowed(update.identity)) return;
      const { attributes } = update;
      const segment = attributes[TRANSCRIPTION_SEGMENT];
      if (segment === undefined) return;
      // The agent transcribes its user too: a segment naming a track that is neither the agent's
      // nor the avatar's is the user's words.
      const track = attributes[TRANSCRIBED_TRACK];
      if (track !== undefined) {
        const agent = room.remoteParticipants.get(update.identity);
        const ours = [
          ...local.trackPublications.keys(),
          ...(agent?.trackPublications.keys() ?? []),
        ];
        if (!ours.includes(track)) return;
      }
      const final = update.done && attributes[TRANSCRIPTION_FINAL] === 'true';
      replies.segment(segment, update.streamId, update.text, final);
    },
  };
}

const TRANSCRIPTION_SEGMENT = 'lk.segment_id';
const TRANSCRIBED_TRACK = 'lk.transcribed_track_id';
const TRANSCRIPTION_FINAL = 'lk.transcription_final';

/** Reads a refused stream to its end without keeping it, so the SDK's buffers do not grow. */
async function drain(chunks: AsyncIterable<Uint8Array>): Promise<void> {
  try {
    for await (const chunk of chunks) void chunk;
  } catch {
    // A stream cut by its sender leaving is fine: nothing was going to be played.
  }
}

/** 16-bit little-endian interleaved PCM chunks -> mono float, carrying split samples over. */
async function* monoPcm(chunks: AsyncIterable<Uint8Array>, channels: number) {
  const frameBytes = 2 * channels;
  let carry = new Uint8Array(0);
  for await (const chunk of chunks) {
    const bytes = carry.length ? concat(carry, chunk) : chunk;
    const frames = Math.floor(bytes.length / frameBytes);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out = new Float32Array(frames);
    for (let f = 0; f < frames; f++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += view.getInt16((f * channels + c) * 2, true);
      out[f] = sum / channels / 32768;
    }
    carry = bytes.slice(frames * frameBytes);
    if (frames > 0) yield out;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
