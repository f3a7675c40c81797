// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AudioFrame,
  DisconnectReason,
  AudioSource,
  Room,
  RoomEvent,
  VideoBufferType,
  VideoFrame,
  VideoSource,
  type RemoteParticipant,
  type RoomOptions,
} from '@livekit/rtc-node';
import type { Logger } from 'pino';
import { FaceMotion, type FaceRenderer } from '../render/index.js';
import type { SpeechChannel } from '../tts/index.js';
import {
  MediaJoinRefusedError,
  MediaUnavailableError,
  type AudioItem,
  type InterruptOutcome,
  type MediaSession,
  type MediaSessionObserver,
  type MediaSessionSpec,
  type SpeechItem,
} from '../mediaCore.js';
import { AgentStateWatcher } from './agentStateWatcher.js';
import { attachAvatarProtocol } from './avatarProtocol.js';
import { publishAvatarTracks, tracksNotReceived } from './avatarTracks.js';
import type { AvatarVideoCodec } from './avatarVideoCodec.js';
import { mintAvatarToken } from './avatarToken.js';
import { ChatPublisher } from './chatPublisher.js';
import { FaceAhead } from './faceAhead.js';
import { FaceStream } from './faceStream.js';
import { PlayoutClock } from './playoutClock.js';
import { roomServiceFor } from './roomAdmin.js';
import { SpeechPlayer, type QueuedTiming } from './speechPlayer.js';
import { OUTPUT_RATE } from './utterance.js';
import { listenToTranscriptions, type TranscriptionUpdate } from './transcriptionStreams.js';
import { audioUtterance, speechUtterance, type WordsShaping } from './utteranceSources.js';
import type { SpeakWords } from './wordsAlignment.js';
import { VideoDemand } from './videoDemand.js';
import { VideoLoop } from './videoLoop.js';
import { withTimeout } from './withTimeout.js';

export interface LiveKitMediaSessionOptions {
  spec: MediaSessionSpec;
  observer: MediaSessionObserver;
  /** The session's line to its voice's engine; closed with the session. */
  speech: SpeechChannel;
  /** The avatar's face (a catalogue design or a photo): the same frames either way. */
  renderer: FaceRenderer;
  log: Logger;
  /** How long the agent named by `publish_on_behalf` may be gone before the session ends. */
  agentAbsenceMs: number;
  /** Bound on each stage of the start: room set-up, join, each publish, the first frame. */
  stageTimeoutMs: number;
  videoCodec: AvatarVideoCodec;
  /**
   * Speaks the words of supplied audio (`/audio?text=`, an agent's transcript) to align them to
   * it, so that they shape the mouth; without it the audio alone moves the mouth.
   */
  speakWords?: SpeakWords;
  /** Told when the session exists (before it joins) and when it has closed. */
  lifecycle?: {
    opened(session: LiveKitMediaSession): void;
    closed(session: LiveKitMediaSession): void;
  };
}

/** The AudioSource's queue: short, so an interrupt is heard as silence quickly. */
export const AUDIO_QUEUE_MS = 200;

/**
 * How the avatar joins: with dynacast, so that the server may turn the video's encoding off while
 * nobody watches it (and VideoDemand then stops the rendering too); with two peer connections (publisher and subscriber), the mode every
 * LiveKit server speaks. Left to its default, rtc-node first asks for `/rtc/v1` (one peer
 * connection for both directions); a server without it (the embedded one) refuses, and rtc-node
 * falls back with six unused receive transceivers on its publisher connection and, granted fast
 * publish, a connect() that waits for that connection too: 186-212 ms against 113-115 ms for
 * one join on the embedded server. (rtc-node's `RoomOptions` type omits the field; the FFI
 * options it is passed to carry it.)
 */
const JOIN_OPTIONS: RoomOptions & { singlePeerConnection: boolean } = {
  autoSubscribe: false,
  dynacast: true,
  singlePeerConnection: false,
};
/** How long leaving the room (disconnect, sources closed) may take before close() moves on. */
const LEAVE_TIMEOUT_MS = 5_000;

/** Wall-clock ms since the epoch with sub-ms precision: the face stream's clock. */
const epochMs = (perfMs = performance.now()) => performance.timeOrigin + perfMs;

/**
 * One avatar in one LiveKit room: joins as the session's `agent_identity`, publishes a 512x512
 * 25 fps video track and a 48 kHz mono audio track, speaks what it is given in its voice with a
 * lip-synced face, reports progress on `lk.chat`, and ends the session if the room goes away.
 * In `client` mode it publishes no video: the face's state goes out as the `visage.face` text
 * stream instead, one message per tick, timed on the same clock as the audio.
 */
export class LiveKitMediaSession implements MediaSession {
  private readonly room = new Room();
  private readonly audioSource = new AudioSource(OUTPUT_RATE, 1, AUDIO_QUEUE_MS);
  /** Video mode only. */
  private readonly videoSource: VideoSource | undefined;
  private readonly clock = new PlayoutClock();
  private readonly player: SpeechPlayer;
  private readonly chat: ChatPublisher;
  private readonly video: VideoLoop;
  /** Whether anyone watches the video: frames are rendered only while someone does (video mode). */
  private readonly demand: VideoDemand | undefined;
  /** Client mode: the face's motion and the stream it goes out on. */
  private readonly face: { stream: FaceStream; ahead: FaceAhead } | undefined;
  private readonly renderer: FaceRenderer;
  /** The agent's state and the user's questions, for the face (sessions with an agent only). */
  private readonly agentState: AgentStateWatcher | undefined;
  private readonly bornAt = performance.now();
  private audioTrackSid: string | undefined;
  private parked = false;
  private closing = false;
  private rendered = 0;
  private agentAbsence: NodeJS.Timeout | undefined;
  private firstFrame: (() => void) | undefined;
  private readonly shaping: WordsShaping | undefined;
  /** The avatar protocol's reader of the agent's reply transcripts, once joined. */
  private protocol: { transcript(update: TranscriptionUpdate): void } | undefined;

  private constructor(private readonly options: LiveKitMediaSessionOptions) {
    this.renderer = options.renderer;
    this.shaping = options.speakWords ? { speak: options.speakWords, log: options.log } : undefined;
    this.agentState = options.spec.publishOnBehalf
      ? new AgentStateWatcher(options.spec.publishOnBehalf, options.log)
      : undefined;
    const clientMode = options.spec.mode === 'client';
    this.videoSource = clientMode
      ? undefined
      : new VideoSource(this.renderer.width, this.renderer.height);
    if (clientMode) {
      const stream = new FaceStream(
        { streamText: (opts) => this.room.localParticipant!.streamText(opts) },
        {
          avatarId: this.renderer.avatarId,
          width: this.renderer.width,
          height: this.renderer.height,
          fps: this.renderer.recommendedFps.active,
          atlasUrls: options.spec.atlasUrls,
        },
        options.log,
      );
      const ahead = new FaceAhead({
        motion: new FaceMotion(Math.floor(Math.random() * 2 ** 32)),
        stream,
        mouthIn: (aheadMs) => this.player.mouthLeavingIn(aheadMs),
        knownAheadMs: () => this.player.mouthKnownAheadMs(),
        state: () => ({ parked: this.parked, conversation: this.agentState?.cue() }),
        bornAt: this.bornAt,
        toEpochMs: epochMs,
        fps: this.renderer.recommendedFps.active,
      });
      this.face = { stream, ahead };
    }
    this.chat = new ChatPublisher(
      {
        publishData: (data, opts) => this.room.localParticipant!.publishData(data, opts),
        streamText: (opts) => this.room.localParticipant!.streamText(opts),
        sendText: (text, opts) => this.room.localParticipant!.sendText(text, opts),
      },
      () => this.audioTrackSid,
      options.log,
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
        speakingChanged: (speaking) => options.observer.speakingChanged(speaking),
        queued: this.face ? (u, timing) => this.queued(u.id, timing) : undefined,
      },
      options.log,
    );
    this.video = new VideoLoop(this.renderer.recommendedFps.active, this.tick());
    this.demand = clientMode
      ? undefined
      : new VideoDemand(
          this.room,
          (watched) => (watched ? this.video.resume() : this.video.pause()),
          options.log,
        );
  }

  static async start(o: LiveKitMediaSessionOptions): Promise<LiveKitMediaSession> {
    const session = new LiveKitMediaSession(o);
    o.lifecycle?.opened(session);
    try {
      await session.join();
    } catch (err) {
      await session.close();
      const message = `could not join ${o.spec.roomName}: ${String(err)}`;
      // rtc-node reports the signal server's HTTP answer, e.g. "401 Unauthorized - invalid token".
      if (/\b40[13]\b/.test(String(err))) throw new MediaJoinRefusedError(message, { cause: err });
      throw new MediaUnavailableError(message, { cause: err });
    }
    if (session.closing) {
      // Closed while joining: the join may have completed after close() disconnected.
      await withTimeout(session.room.disconnect(), LEAVE_TIMEOUT_MS, 'leaving').catch(
        () => undefined,
      );
      throw new MediaUnavailableError('the session was closed while it was starting');
    }
    return session;
  }

  get speaking(): boolean {
    return this.player.speaking;
  }

  /** Video frames rendered and handed to the encoder so far (none while nobody watches). */
  get framesRendered(): number {
    return this.rendered;
  }

  speak(item: SpeechItem): void {
    this.player.enqueue(speechUtterance(item.utteranceId, item.text, this.options.speech));
  }

  playAudio(item: AudioItem): void {
    this.player.enqueue(
      audioUtterance(item.utteranceId, item.pcm, item.sampleRate, item.text, this.shaping),
    );
  }

  interrupt(): InterruptOutcome {
    const outcome = this.player.interrupt();
    this.face?.stream.cut(epochMs());
    this.face?.ahead.refresh();
    return outcome;
  }

  setWaiting(waiting: boolean): void {
    if (waiting === this.parked) return;
    this.parked = waiting;
    const fps = this.renderer.recommendedFps;
    this.video.setFps(waiting ? fps.parked : fps.active);
    this.face?.ahead.setFps(waiting ? fps.parked : fps.active);
    this.face?.ahead.refresh({ pose: true });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearTimeout(this.agentAbsence);
    this.demand?.stop();
    this.video.stop();
    this.player.close();
    this.options.speech.close();
    // Let the last lk.chat final out before leaving (bounded: never hang on a dead room).
    await Promise.race([
      Promise.all([this.chat.flushed(), this.face?.stream.close()]),
      sleep(500, undefined, { ref: false }),
    ]);
    // Bounded: under load rtc-node's disconnect was seen to never return for a connection whose
    // track publication had stalled, and a close that never ends holds its create (and the
    // create's 503) for good. Past the bound the server drops the avatar on its own.
    await withTimeout(
      (async () => {
        await this.room.disconnect().catch(() => undefined);
        await this.audioSource.close().catch(() => undefined);
        await this.videoSource?.close().catch(() => undefined);
      })(),
      LEAVE_TIMEOUT_MS,
      `leaving the room took longer than ${LEAVE_TIMEOUT_MS / 1000} s`,
    ).catch((err: unknown) =>
      this.options.log.warn({ err }, 'the avatar did not leave the room cleanly; moving on'),
    );
    const { livekit } = this.options.spec;
    if (this.options.spec.ownsRoom && !('token' in livekit)) {
      // The room was made for this session alone; without this it would wait out its timeout.
      await roomServiceFor(livekit, this.options.stageTimeoutMs)
        .deleteRoom(this.options.spec.roomName)
        .catch((err: unknown) => this.options.log.debug({ err }, 'could not delete the room'));
    }
    this.options.lifecycle?.closed(this);
  }

  private async join(): Promise<void> {
    const { spec, log, stageTimeoutMs } = this.options;
    // How long each step of the join took (ms), for the log line below and the bench.
    const steps: Record<string, number> = {};
    let stepStart = performance.now();
    const step = (name: string) => {
      const now = performance.now();
      steps[name] = Math.round(now - stepStart);
      stepStart = now;
    };
    const joinStartedAt = Date.now();
    let token: string;
    if ('token' in spec.livekit) {
      // The caller's own LiveKit: its token is all Visage has (no RoomService credentials).
      token = spec.livekit.token;
    } else {
      // The server would close a room nobody joined after its default empty timeout (300 s on
      // LiveKit), whatever the session's own timeouts: create or reconfigure it to outlast them.
      await withTimeout(
        roomServiceFor(spec.livekit, stageTimeoutMs).createRoom({
          name: spec.roomName,
          emptyTimeout: spec.roomTimeoutSeconds,
          departureTimeout: spec.roomTimeoutSeconds,
        }),
        stageTimeoutMs,
        'setting up the room timed out',
      );
      token = await mintAvatarToken(
        spec.livekit,
        spec.roomName,
        spec.agentIdentity,
        spec.publishOnBehalf,
      );
      step('room_ms');
    }
    this.room.on(RoomEvent.Disconnected, (reason) => {
      if (this.closing) return;
      // A room deleted or closed by the server is an orderly end; anything else (server gone,
      // avatar removed, network) is an error the operator should see.
      const name = DisconnectReason[reason] ?? String(reason);
      const closed =
        reason === DisconnectReason.ROOM_DELETED || reason === DisconnectReason.ROOM_CLOSED;
      this.options.observer.ended(
        closed ? 'room_closed' : 'error',
        `the avatar was disconnected from the room: ${name}`,
      );
    });
    this.room.on(RoomEvent.ParticipantDisconnected, (p: RemoteParticipant) => this.left(p));
    this.room.on(RoomEvent.ParticipantConnected, (p: RemoteParticipant) => {
      if (p.identity === spec.publishOnBehalf) clearTimeout(this.agentAbsence);
      // A text stream reaches only those in the room when it opens: a new one for the newcomer.
      this.restartFace();
    });
    this.agentState?.attach(this.room, () => [
      ...(this.room.localParticipant?.trackPublications.keys() ?? []),
    ]);
    if (spec.publishOnBehalf) {
      listenToTranscriptions(this.room, (update) => {
        if (update.done) this.agentState?.transcript(update);
        this.protocol?.transcript(update);
      });
    }
    const started = performance.now();
    await withTimeout(
      this.room.connect(spec.livekit.url, token, JOIN_OPTIONS),
      stageTimeoutMs,
      'joining the room timed out',
    );
    step('connect_ms');
    this.agentState?.joined(this.room);
    this.protocol = attachAvatarProtocol(
      this.room,
      this.player,
      spec.publishOnBehalf,
      log,
      this.shaping,
    );
    this.restartFace();
    const { video, audio } = await publishAvatarTracks(this.room.localParticipant!, {
      videoSource: this.videoSource,
      audioSource: this.audioSource,
      videoCodec: this.options.videoCodec,
      maxFramerate: this.renderer.recommendedFps.active,
      stageTimeoutMs,
    });
    step('publish_ms');
    // Frames flow while the server's view is checked, so that the first key frame is not held
    // back by the check (a failed start stops them with the rest of the session).
    const firstFrame = new Promise<void>((resolve) => (this.firstFrame = resolve));
    this.video.start();
    this.demand?.start();
    if (!('token' in spec.livekit)) {
      // The start fails, and the create with it (503), rather than report a session without
      // video (see tracksNotReceived); a retry joins afresh.
      const missing = await tracksNotReceived(
        roomServiceFor(spec.livekit, stageTimeoutMs),
        spec,
        video ? [audio.sid!, video.sid!] : [audio.sid!],
      );
      if (missing.length > 0) {
        const kinds = missing.map((sid) => (sid === audio.sid ? 'audio' : 'video')).join(' and ');
        throw new Error(`the LiveKit server never received the avatar's ${kinds} track`);
      }
      step('tracks_received_ms');
    }
    this.audioTrackSid = audio.sid;
    await withTimeout(firstFrame, stageTimeoutMs, 'rendering the first frame timed out');
    step('first_frame_ms');
    log.info(
      {
        room: spec.roomName,
        identity: spec.agentIdentity,
        join_ms: Math.round(performance.now() - started),
        join_started_at: joinStartedAt,
        ...steps,
      },
      'avatar joined the room and published its tracks',
    );
  }

  /** What each tick of the frame clock does: a video frame, or (client mode) a face message. */
  private tick(): () => void {
    const { face, videoSource } = this;
    if (face) {
      return () => {
        face.ahead.tick();
        this.firstFrame?.();
        this.firstFrame = undefined;
      };
    }
    if (!videoSource) throw new Error('a session has a video source or a face stream');
    return () => this.renderFrame(videoSource);
  }

  private renderFrame(videoSource: VideoSource): void {
    this.rendered++;
    const frame = this.renderer.renderFrame({
      timeMs: performance.now() - this.bornAt,
      mouth: this.player.mouthNow(),
      parked: this.parked,
      conversation: this.agentState?.cue(),
    });
    videoSource.captureFrame(
      new VideoFrame(frame, this.renderer.width, this.renderer.height, VideoBufferType.I420),
    );
    this.firstFrame?.();
    this.firstFrame = undefined;
  }

  /** Client mode: a new face stream (someone joined), and the face sent ahead again on it. */
  private restartFace(): void {
    this.face?.stream.restart(epochMs());
    this.face?.ahead.refresh({ all: true });
  }

  /** Client mode: a chunk's words and visemes, on the sender's clock, before it is heard. */
  private queued(utteranceId: string, timing: QueuedTiming): void {
    const at = (posMs: number) => epochMs(this.clock.wallAt(posMs));
    const stream = this.face!.stream;
    stream.together(() => {
      stream.words(
        utteranceId,
        timing.words.map((w) => ({ text: w.text, startMs: at(w.startMs), endMs: at(w.endMs) })),
      );
      stream.visemes(
        utteranceId,
        timing.visemes.map((v) => ({
          viseme: v.viseme,
          startMs: at(v.startMs),
          endMs: at(v.endMs),
        })),
      );
    });
    // The face sent ahead did not know this audio: once the chunk is placed (the player goes on
    // synchronously to its first push), the same times again with its mouth.
    const ahead = this.face!.ahead;
    queueMicrotask(() => ahead.refresh());
  }

  private left(p: RemoteParticipant): void {
    const agent = this.options.spec.publishOnBehalf;
    if (!agent || p.identity !== agent || this.closing) return;
    clearTimeout(this.agentAbsence);
    this.agentAbsence = setTimeout(
      () => this.options.observer.ended('agent_left', `${agent} left the room`),
      this.options.agentAbsenceMs,
    );
    this.agentAbsence.unref();
  }
}
