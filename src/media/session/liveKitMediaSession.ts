import {
  AudioFrame,
  DisconnectReason,
  AudioSource,
  LocalAudioTrack,
  LocalVideoTrack,
  Room,
  RoomEvent,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoFrame,
  VideoSource,
  type RemoteParticipant,
} from '@livekit/rtc-node';
import type { Logger } from 'pino';
import { createFaceRenderer } from '../render/index.js';
import type { TtsEngine } from '../tts/index.js';
import type { VoiceProfile } from '../voice/index.js';
import {
  MediaUnavailableError,
  type AudioItem,
  type InterruptOutcome,
  type MediaSession,
  type MediaSessionObserver,
  type MediaSessionSpec,
  type SpeechItem,
} from '../mediaCore.js';
import { attachAvatarProtocol } from './avatarProtocol.js';
import { mintAvatarToken } from './avatarToken.js';
import { ChatPublisher } from './chatPublisher.js';
import { PlayoutClock } from './playoutClock.js';
import { SpeechPlayer } from './speechPlayer.js';
import { OUTPUT_RATE } from './utterance.js';
import { audioUtterance, speechUtterance } from './utteranceSources.js';
import { VideoLoop } from './videoLoop.js';

export interface LiveKitMediaSessionOptions {
  spec: MediaSessionSpec;
  observer: MediaSessionObserver;
  engine: TtsEngine;
  voice: VoiceProfile;
  log: Logger;
  /** How long the agent named by `publish_on_behalf` may be gone before the session ends. */
  agentAbsenceMs: number;
  connectTimeoutMs: number;
}

/** The AudioSource's queue: short, so an interrupt is heard as silence quickly. */
const AUDIO_QUEUE_MS = 200;
const VIDEO_MAX_BITRATE = 1_200_000n;
/**
 * Audio reaches a subscriber later than video captured at the same moment (the audio source's
 * native buffering and the receiver's jitter buffer). Measured with `npm run bench` (lip-sync
 * offset): the mouth led the sound by ~60 ms; showing the pose from this much earlier in the
 * audio brings them together.
 */
const AUDIO_PATH_LATENCY_MS = 50;

/**
 * One avatar in one LiveKit room: joins as the session's `agent_identity`, publishes a 512x512
 * 25 fps video track and a 48 kHz mono audio track, speaks what it is given in its voice with a
 * lip-synced face, reports progress on `lk.chat`, and ends the session if the room goes away.
 */
export class LiveKitMediaSession implements MediaSession {
  private readonly room = new Room();
  private readonly audioSource = new AudioSource(OUTPUT_RATE, 1, AUDIO_QUEUE_MS);
  private readonly videoSource: VideoSource;
  private readonly clock = new PlayoutClock();
  private readonly player: SpeechPlayer;
  private readonly chat: ChatPublisher;
  private readonly video: VideoLoop;
  private readonly renderer;
  private readonly bornAt = performance.now();
  private audioTrackSid: string | undefined;
  private parked = false;
  private closing = false;
  private agentAbsence: NodeJS.Timeout | undefined;

  private constructor(private readonly o: LiveKitMediaSessionOptions) {
    this.renderer = createFaceRenderer(o.spec.avatarId);
    this.videoSource = new VideoSource(this.renderer.width, this.renderer.height);
    this.chat = new ChatPublisher(
      {
        publishData: (data, opts) => this.room.localParticipant!.publishData(data, opts),
        streamText: (opts) => this.room.localParticipant!.streamText(opts),
        sendText: (text, opts) => this.room.localParticipant!.sendText(text, opts),
      },
      () => this.audioTrackSid,
      o.log,
      o.spec.publishOnBehalf === null,
    );
    this.player = new SpeechPlayer(
      {
        capture: (pcm) =>
          this.audioSource.captureFrame(new AudioFrame(pcm, OUTPUT_RATE, 1, pcm.length)),
        clear: () => this.audioSource.clearQueue(),
      },
      this.clock,
      {
        started: (u) => u.text !== null && this.chat.started(u),
        progress: (u, heard) => u.text !== null && this.chat.progress(u, heard),
        finished: (u, outcome) => u.text !== null && this.chat.finished(u, outcome),
        speakingChanged: (speaking) => o.observer.speakingChanged(speaking),
      },
      o.log,
    );
    this.video = new VideoLoop(this.renderer.recommendedFps.active, () => this.renderFrame());
  }

  static async start(o: LiveKitMediaSessionOptions): Promise<LiveKitMediaSession> {
    const session = new LiveKitMediaSession(o);
    try {
      await session.join();
      return session;
    } catch (err) {
      await session.close();
      throw new MediaUnavailableError(`could not join ${o.spec.roomName}: ${String(err)}`, {
        cause: err,
      });
    }
  }

  get speaking(): boolean {
    return this.player.speaking;
  }

  speak(item: SpeechItem): void {
    this.player.enqueue(speechUtterance(item.utteranceId, item.text, this.o.engine, this.o.voice));
  }

  playAudio(item: AudioItem): void {
    this.player.enqueue(audioUtterance(item.utteranceId, item.pcm, item.sampleRate, item.text));
  }

  interrupt(): InterruptOutcome {
    return this.player.interrupt();
  }

  setWaiting(waiting: boolean): void {
    if (waiting === this.parked) return;
    this.parked = waiting;
    const fps = this.renderer.recommendedFps;
    this.video.setFps(waiting ? fps.parked : fps.active);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearTimeout(this.agentAbsence);
    this.video.stop();
    this.player.close();
    // Let the last lk.chat final out before leaving (bounded: never hang on a dead room).
    await Promise.race([this.chat.flushed(), sleep(500)]);
    await this.room.disconnect().catch(() => undefined);
    await this.audioSource.close().catch(() => undefined);
    await this.videoSource.close().catch(() => undefined);
  }

  private async join(): Promise<void> {
    const { spec, log } = this.o;
    const token = await mintAvatarToken(
      spec.livekit,
      spec.roomName,
      spec.agentIdentity,
      spec.publishOnBehalf,
    );
    this.room.on(RoomEvent.Disconnected, (reason) => {
      if (this.closing) return;
      // A deleted room is an orderly end; anything else (server gone, avatar removed, network)
      // is an error the operator should see.
      const name = DisconnectReason[reason] ?? String(reason);
      this.o.observer.ended(
        reason === DisconnectReason.ROOM_DELETED ? 'room_closed' : 'error',
        `the avatar was disconnected from the room: ${name}`,
      );
    });
    this.room.on(RoomEvent.ParticipantDisconnected, (p: RemoteParticipant) => this.left(p));
    this.room.on(RoomEvent.ParticipantConnected, (p: RemoteParticipant) => {
      if (p.identity === spec.publishOnBehalf) clearTimeout(this.agentAbsence);
    });
    const started = performance.now();
    await withTimeout(
      this.room.connect(spec.livekit.url, token, { autoSubscribe: false, dynacast: false }),
      this.o.connectTimeoutMs,
      'connecting to LiveKit timed out',
    );
    attachAvatarProtocol(this.room, this.player, log);
    const local = this.room.localParticipant!;
    const audio = await local.publishTrack(
      LocalAudioTrack.createAudioTrack('avatar-audio', this.audioSource),
      new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE, dtx: false, red: false }),
    );
    this.audioTrackSid = audio.sid;
    await local.publishTrack(
      LocalVideoTrack.createVideoTrack('avatar-video', this.videoSource),
      new TrackPublishOptions({
        source: TrackSource.SOURCE_CAMERA,
        simulcast: false,
        videoEncoding: {
          maxBitrate: VIDEO_MAX_BITRATE,
          maxFramerate: this.renderer.recommendedFps.active,
        },
      }),
    );
    this.video.start();
    log.info(
      {
        room: spec.roomName,
        identity: spec.agentIdentity,
        join_ms: Math.round(performance.now() - started),
      },
      'avatar joined the room and published its tracks',
    );
  }

  private renderFrame(): void {
    const frame = this.renderer.renderFrame({
      timeMs: performance.now() - this.bornAt,
      mouth: this.player.poseAt(this.clock.position() - AUDIO_PATH_LATENCY_MS),
      parked: this.parked,
    });
    this.videoSource.captureFrame(
      new VideoFrame(frame, this.renderer.width, this.renderer.height, VideoBufferType.I420),
    );
  }

  private left(p: RemoteParticipant): void {
    const agent = this.o.spec.publishOnBehalf;
    if (!agent || p.identity !== agent || this.closing) return;
    clearTimeout(this.agentAbsence);
    this.agentAbsence = setTimeout(
      () => this.o.observer.ended('agent_left', `${agent} left the room`),
      this.o.agentAbsenceMs,
    );
    this.agentAbsence.unref();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
