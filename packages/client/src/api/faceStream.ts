// SPDX-License-Identifier: Apache-2.0
// zod's small build: the stream's reader runs in browsers (@visage-avatar/web), where the
// classic build weighed 450 kB of a page's 460.
import * as z from 'zod/mini';
import { ID_PREFIXES, idPattern } from './idFormat.js';

/**
 * The face of a `client` mode session, for a renderer in the viewer's browser (or any other):
 * the avatar participant publishes no video, and instead a LiveKit text stream on this topic. A
 * stream starts with a `start` line; then every line is one JSON message followed by `\n`. A new
 * stream begins (with its own `start`) whenever a participant joins, so that a late viewer reads
 * from its first message; a reader keeps the newest stream and drops the others.
 */
export const FACE_STREAM_TOPIC = 'visage.face';

/** The version of the messages below; a change a reader could misread makes a new one. */
export const FACE_STREAM_VERSION = 1;

/**
 * The 15 Oculus (Meta) visemes, in their order: what TalkingHead, Ready Player Me and most 3D
 * avatars animate.
 */
export const OCULUS_VISEMES = [
  'sil',
  'PP',
  'FF',
  'TH',
  'DD',
  'kk',
  'CH',
  'SS',
  'nn',
  'RR',
  'aa',
  'E',
  'I',
  'O',
  'U',
] as const;
export const oculusVisemeSchema = z.enum(OCULUS_VISEMES);
export type OculusViseme = z.infer<typeof oculusVisemeSchema>;

/**
 * Visage's own mouth shapes (what its sprites are drawn for): `rest`, then the Preston-Blair-like
 * set. A renderer of Visage's atlas uses these; any other renderer uses `oculus`.
 */
export const VISAGE_VISEMES = [
  'rest',
  'AA',
  'E',
  'I',
  'O',
  'U',
  'MBP',
  'FV',
  'TH',
  'L',
  'WQ',
  'SZ',
  'CH',
  'KG',
  'R',
] as const;

/** The Oculus viseme nearest to each of Visage's mouth shapes. */
export const OCULUS_OF_VISAGE: Readonly<Record<(typeof VISAGE_VISEMES)[number], OculusViseme>> = {
  rest: 'sil',
  AA: 'aa',
  E: 'E',
  I: 'I',
  O: 'O',
  U: 'U',
  MBP: 'PP',
  FV: 'FF',
  TH: 'TH',
  L: 'nn',
  WQ: 'U',
  SZ: 'SS',
  CH: 'CH',
  KG: 'kk',
  R: 'RR',
};

/**
 * Every time in the stream (`t`, `start`, `end`) is the sender's wall clock, Unix ms, at which the
 * avatar's audio at that instant left the avatar: the clock that the RTCP sender reports of its
 * audio track map RTP time to. A browser reads where its playout is on that clock from the audio
 * receiver's `estimatedPlayoutTimestamp` (inbound-rtp statistics, NTP ms; subtract 2208988800000)
 * and draws the message whose `t` it has reached: the face then moves with the sound it plays,
 * whatever the network and the jitter buffer did to the audio.
 */
const senderMs = z.number().check(z.nonnegative());

/** A share, 0 .. 1 (how far the mouth is open, how far the lids are shut). */
const share = z.number().check(z.minimum(0), z.maximum(1));

const utteranceId = z.string().check(z.regex(idPattern([ID_PREFIXES.utterance])));

/** First line of every stream: what follows and how to read it. */
export const faceStartSchema = z.object({
  type: z.literal('start'),
  v: z.literal(FACE_STREAM_VERSION),
  avatar_id: z.string(),
  /** The avatar's image size, px (its atlas draws at this size). */
  width: z.int().check(z.positive()),
  height: z.int().check(z.positive()),
  /** `face` messages a second while active; fewer while parked (`look: "parked"`). */
  fps: z.number().check(z.positive()),
  /**
   * Where the avatar's atlas is fetched (a signed URL, no API key: `GET /v1/avatars/{id}/atlas`),
   * when the service knows it; a reader may also be handed it by the page (the session's
   * `atlas_url`).
   */
  atlas_url: z.optional(z.string().check(z.maxLength(2048))),
  /** The sender's clock when the stream started (see the note on times above). */
  t: senderMs,
});

/**
 * The whole face at one instant: send-side the same state the server's renderer draws a video
 * frame from. A renderer draws the newest message whose `t` it has reached, and may interpolate
 * `open`, `lid` and `lift` between two.
 */
export const faceFrameSchema = z.object({
  type: z.literal('face'),
  t: senderMs,
  /** Visage's mouth shape, and how far it is realised (0 is the closed rest mouth). */
  viseme: z.enum(VISAGE_VISEMES),
  open: share,
  /** The same mouth as the nearest Oculus viseme (`sil` while closed at rest). */
  oculus: oculusVisemeSchema,
  /** Upper lids, 0 open .. 1 shut. */
  lid: share,
  /** Where the eyes look (the atlas's gaze names: `center`, `left`, `up-right`, ...). */
  gaze: z.string().check(z.maxLength(32)),
  /** The head's sideways lean: -1, 0 or 1 px at the avatar's size. */
  sway: z.int().check(z.minimum(-1), z.maximum(1)),
  /** The head's breathing lift, px (0 .. 3), fractional. */
  lift: z.number().check(z.minimum(0), z.maximum(8)),
  /**
   * Which life the face has: `idle` (no agent, or before it says), `listening`, `thinking`,
   * `speaking` (an agent's states), or `parked` (`waiting_state`).
   */
  look: z.enum(['idle', 'listening', 'thinking', 'speaking', 'parked']),
});

/** The words of an utterance, on the sender's clock, sent when its audio is queued. */
export const faceWordsSchema = z.object({
  type: z.literal('words'),
  utterance_id: utteranceId,
  words: z.array(z.object({ text: z.string(), start: senderMs, end: senderMs })),
});

/**
 * The mouth of an utterance's queued audio as Oculus visemes, for renderers that animate from a
 * timeline (TalkingHead's `visemes`, `vtimes`, `vdurations`), sent when the audio is queued.
 */
export const faceVisemesSchema = z.object({
  type: z.literal('visemes'),
  utterance_id: utteranceId,
  visemes: z.array(z.object({ viseme: oculusVisemeSchema, start: senderMs, end: senderMs })),
});

/**
 * Speech was cut (an interrupt): nothing queued after `t` will be heard. A renderer closes the
 * mouth at `t` and drops the words and visemes after it.
 */
export const faceCutSchema = z.object({
  type: z.literal('cut'),
  t: senderMs,
});

export const faceMessageSchema = z.discriminatedUnion('type', [
  faceStartSchema,
  faceFrameSchema,
  faceWordsSchema,
  faceVisemesSchema,
  faceCutSchema,
]);

export type FaceMessage = z.infer<typeof faceMessageSchema>;
export type FaceFrame = z.infer<typeof faceFrameSchema>;

/** One line of the stream (JSON and its `\n`). */
export function encodeFaceMessage(message: FaceMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/** The messages in a piece of the stream's text; lines that are not one are skipped. */
export function parseFaceMessages(text: string): FaceMessage[] {
  const out: FaceMessage[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let body: unknown;
    try {
      body = JSON.parse(line);
    } catch {
      continue;
    }
    const parsed = faceMessageSchema.safeParse(body);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}
