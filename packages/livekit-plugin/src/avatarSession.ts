// SPDX-License-Identifier: Apache-2.0
// One piece at about 400 lines: AvatarSession's start, the outputs it installs and its close
// share one set of private state (the session, the abort, the queue, what close must undo).
import { randomBytes } from 'node:crypto';
import { getJobContext, voice } from '@livekit/agents';
import { TrackKind } from '@livekit/rtc-node';
import type { Room } from './agentsRtcTypes.js';
import { RoomServiceClient } from 'livekit-server-sdk';
import type { CreateSessionRequest, ParticipantToken, Session } from '@visage-avatar/client/api';
import { VisageClient } from '@visage-avatar/client';
import { subscribeAvatarChat } from './avatarChat.js';
import { stayUnsubscribedFromAvatar } from './agentSubscriptions.js';
import { dispatchedFace } from './dispatchedFace.js';
import { mintAvatarJoinToken } from './avatarJoinToken.js';
import { VisageException } from './errors.js';
import { IdleController } from './idleController.js';
import { pluginLog } from './log.js';
import { ensurePhotoAvatar } from './photoAvatar.js';
import {
  resolveOptions,
  resolveStartOptions,
  type AvatarFace,
  type AvatarSessionOptions,
  type ResolvedOptions,
  type StartOptions,
} from './options.js';
import { SessionCommandQueue } from './sessionCommandQueue.js';
import { createSessionWithRetry } from './sessionStarter.js';
import { VisageAudioStreamOutput } from './visageAudioStreamOutput.js';
import { VisageSpeechOutput } from './visageSpeechOutput.js';
import { VisageTextTTS } from './visageTextTts.js';

/** How long `aclose()` gives the DELETE before giving up (the service also ends sessions whose agent left). */
const DELETE_TIMEOUT_MS = 5_000;

/**
 * A Visage avatar for a LiveKit Agents `AgentSession`: the agent's replies are spoken by the
 * avatar, which joins the agent's own room and publishes on the agent's behalf.
 *
 * @example
 * ```ts
 * const avatar = new AvatarSession({ avatarId: 'avt_…', voiceId: 'vc_…' }); // VISAGE_API_KEY
 * await avatar.start(session, ctx.room); // before session.start()
 * await session.start({ agent, room: ctx.room });
 * ```
 */
export class AvatarSession extends voice.AvatarSession {
  readonly #o: ResolvedOptions;
  /** How the face reaches the viewers: the option, else the job's dispatch, else video. */
  #face: AvatarFace = 'video';
  /** Creation is retried by the plugin itself (429 bound), so this client never retries. */
  readonly #control: VisageClient;
  /** Driving calls: the client retries a per-key request-rate 429 briefly. */
  readonly #driving: VisageClient;
  #session?: Session;
  #participantToken?: ParticipantToken;
  #queue?: SessionCommandQueue;
  #output?: VisageSpeechOutput;
  #idle?: IdleController;
  #unsubscribeChat?: () => void;
  /** Stops keeping the agent unsubscribed from the avatar's tracks. */
  #subscribeAgain?: () => void;
  #agentSession?: voice.AgentSession;
  #roomName?: string;
  /** The avatar's identity, chosen by the plugin when it mints the avatar's token. */
  #identity?: string;
  #livekit: StartOptions = {};
  #starting?: Promise<unknown>;
  #closing?: Promise<void>;
  #ending?: Promise<void>;
  readonly #abort = new AbortController();

  constructor(options: AvatarSessionOptions) {
    super();
    this.#o = resolveOptions(options);
    const common = {
      apiKey: this.#o.apiKey,
      baseUrl: this.#o.apiUrl,
      timeoutMs: this.#o.connOptions.timeoutMs,
    };
    this.#control = new VisageClient({ ...common, maxRetries: 0 });
    this.#driving = new VisageClient({ ...common, maxRetries: 2, maxRetryAfterSeconds: 5 });
  }

  override get avatarIdentity(): string {
    return this.#session?.agent_identity ?? this.#identity ?? 'unknown';
  }

  override get provider(): string {
    return 'visage';
  }

  /** The Visage session id, once `start()` created or attached it. */
  get sessionId(): string | undefined {
    return this.#session?.session_id;
  }

  /** The Visage session as the service described it when it was created or attached. */
  get session(): Session | undefined {
    return this.#session;
  }

  /**
   * The participant token from the session's creation (a secret, for a client that should join
   * the room). Undefined when attached to an existing session; see `refreshParticipantToken()`.
   */
  get participantToken(): ParticipantToken | undefined {
    return this.#participantToken;
  }

  get mode(): 'text' | 'audio' {
    return this.#o.mode;
  }

  /**
   * Creates the Visage session in the agent's room (or attaches to `sessionId`) and installs the
   * avatar as the agent's audio output. Call it before `AgentSession.start()`, with the room
   * connected. Returns the session id. If anything fails after the session was created, the
   * session is ended before the error is raised.
   *
   * With the agent's LiveKit credentials (`LIVEKIT_URL`, `LIVEKIT_API_KEY`,
   * `LIVEKIT_API_SECRET`, or `options`), the plugin mints the avatar's token itself and Visage
   * joins the agent's LiveKit with it, whichever LiveKit that is. Without them, Visage joins the
   * LiveKit it is configured with.
   */
  override async start(
    agentSession: voice.AgentSession,
    room: Room,
    options: StartOptions = {},
  ): Promise<string> {
    if (this.#closing) throw new VisageException('AvatarSession closed');
    if (this.#starting) throw new VisageException('an AvatarSession can be started once');
    const starting = this.#start(agentSession, room, options);
    this.#starting = starting;
    try {
      return await starting;
    } catch (err) {
      await this.#endSession('start failed');
      throw err;
    }
  }

  async #start(agentSession: voice.AgentSession, room: Room, options: StartOptions) {
    this.#agentSession = agentSession;
    this.#livekit = resolveStartOptions(options);
    const roomName = room.name || getJobContext(false)?.job.room?.name;
    const localIdentity = getJobContext(false)?.agent?.identity || room.localParticipant?.identity;
    if (!roomName || !localIdentity) {
      throw new VisageException(
        'the agent must be connected to its room before AvatarSession.start() (await ctx.connect())',
      );
    }
    this.#roomName = roomName;
    this.#face = this.#o.face ?? dispatchedFace(getJobContext(false)?.job.metadata) ?? 'video';
    const { livekitUrl, livekitApiKey, livekitApiSecret } = this.#livekit;
    let session: Session;
    const identity = this.#o.avatarParticipantIdentity ?? `visage-avatar-${randomSuffix()}`;
    const onAgentLiveKit = Boolean(livekitUrl && livekitApiKey && livekitApiSecret);
    if (this.#o.sessionId) {
      session = await this.#attach(this.#o.sessionId, roomName);
      // The base class registers the shutdown callback and times the avatar's join; the
      // identity is known here, so it waits for the right participant.
      await super.start(agentSession, room);
    } else if (livekitUrl && livekitApiKey && livekitApiSecret) {
      this.#identity = identity;
      const token = await mintAvatarJoinToken({
        apiKey: livekitApiKey,
        apiSecret: livekitApiSecret,
        roomName,
        identity,
        publishOnBehalf: localIdentity,
      });
      // Before creating: the join metric is timed from here, the real start.
      await super.start(agentSession, room);
      session = await this.#create({ livekit: { url: livekitUrl, token } });
    } else {
      // Visage's own LiveKit: the avatar gets the identity named here, so the base class waits
      // for the right participant and times its join from the real start.
      this.#identity = identity;
      await super.start(agentSession, room);
      session = await this.#create({
        room_name: roomName,
        publish_on_behalf: localIdentity,
        agent_identity: identity,
      });
    }
    this.#session = session;
    const log = pluginLog().child({ session_id: session.session_id });
    // The agent is no viewer: subscribed, it would keep the avatar's video on while no user
    // watches it (agentSubscriptions.ts).
    this.#subscribeAgain = stayUnsubscribedFromAvatar(room, session.agent_identity, (kind) =>
      log.debug({ kind }, "the agent unsubscribed from its avatar's track"),
    );
    if (this.#abort.signal.aborted)
      throw new VisageException('AvatarSession closed while starting');

    const queue = new SessionCommandQueue(this.#driving, session.session_id, {
      timeoutMs: this.#o.connOptions.timeoutMs,
    });
    this.#queue = queue;
    if (this.#o.mode === 'text') {
      const output = new VisageSpeechOutput(queue, {
        playbackTimeoutMs: this.#o.playbackTimeoutMs,
        interruptGraceMs: this.#o.interruptGraceMs,
      });
      this.#output = output;
      this.#unsubscribeChat = subscribeAvatarChat(room, session.agent_identity, (message) =>
        output.handleAvatarChat(message),
      );
      agentSession.tts = new VisageTextTTS(this.#o.sentenceTokenizer);
      agentSession.output.audio = output;
      agentSession.on(voice.AgentSessionEventTypes.AgentStateChanged, this.#handOverTranscript);
    } else {
      agentSession.output.audio = new VisageAudioStreamOutput(queue, {
        room,
        destinationIdentity: session.agent_identity,
        // Without video (client mode) the avatar's voice is the track that says it is there.
        waitRemoteTrack: this.#face === 'client' ? TrackKind.KIND_AUDIO : TrackKind.KIND_VIDEO,
        waitPlaybackStart: true,
      });
    }
    // The avatar cannot pause (neither output can), so a false interruption cannot be resumed:
    // agents-js then ignores its default resumeFalseInterruption with a warning at every start
    // that a newcomer cannot act on. Turned off here, it changes nothing else: a barge-in
    // interrupts the avatar either way.
    const interruption = agentSession.sessionOptions.turnHandling.interruption;
    if (interruption.resumeFalseInterruption && !agentSession.output.audio?.canPause) {
      interruption.resumeFalseInterruption = false;
      log.debug('resumeFalseInterruption turned off: the avatar cannot pause');
    }
    if (this.#o.parkAfterMs !== null) {
      this.#idle = new IdleController(agentSession, queue, this.#o.parkAfterMs);
      this.#idle.start();
    }
    agentSession.on(voice.AgentSessionEventTypes.Close, this.#onAgentSessionClose);
    log.info(
      {
        mode: this.#o.mode,
        face: this.#face,
        room: roomName,
        avatar_identity: session.agent_identity,
        livekit: onAgentLiveKit && !this.#o.sessionId ? 'agent' : 'visage',
      },
      'Visage avatar started',
    );
    return session.session_id;
  }

  /** Creates the session: in the agent's LiveKit (`livekit`) or Visage's own (`room_name`). */
  async #create(
    where:
      | Pick<CreateSessionRequest, 'livekit'>
      | Pick<CreateSessionRequest, 'room_name' | 'publish_on_behalf' | 'agent_identity'>,
  ): Promise<Session> {
    const avatarId = this.#o.avatarId ?? (await this.#photoAvatarId());
    const request: CreateSessionRequest = {
      avatar_id: avatarId,
      mode: this.#face,
      transport: 'livekit',
      ...where,
      ...(this.#o.voiceId ? { voice_id: this.#o.voiceId } : {}),
      ...(this.#o.idleTimeoutSeconds ? { idle_timeout_seconds: this.#o.idleTimeoutSeconds } : {}),
    };
    const created = await createSessionWithRetry(this.#control, request, {
      maxCapacityWaitSeconds: this.#o.maxCapacityWaitSeconds,
      connOptions: this.#o.connOptions,
      signal: this.#abort.signal,
    });
    const {
      participant_token,
      participant_token_expires_at,
      concurrency: _concurrency,
      ...session
    } = created;
    // Kept before anything else can fail, so the session is always ended on the way out.
    this.#session = session;
    if (participant_token && participant_token_expires_at) {
      this.#participantToken = { participant_token, expires_at: participant_token_expires_at };
    }
    return session;
  }

  /** The photo avatar made from (or found for) `avatarImage`. */
  async #photoAvatarId(): Promise<string> {
    const image = this.#o.avatarImage;
    if (image === undefined) throw new VisageException('avatarId or avatarImage is required');
    const avatar = await ensurePhotoAvatar(
      this.#control,
      { apiUrl: this.#o.apiUrl, apiKey: this.#o.apiKey },
      image,
      this.#abort.signal,
    );
    return avatar.avatar_id;
  }

  async #attach(sessionId: string, roomName: string): Promise<Session> {
    const { concurrency: _concurrency, ...session } = await this.#control.sessions.get(sessionId, {
      signal: this.#abort.signal,
    });
    if (session.status === 'ended') {
      throw new VisageException(
        `the Visage session ${sessionId} has ended (${session.end_reason})`,
      );
    }
    if (session.room_name !== roomName) {
      throw new VisageException(
        `the Visage session ${sessionId} is in room '${session.room_name}', not the agent's room '${roomName}'`,
      );
    }
    this.#session = session;
    this.#checkAssignedIdentity(session);
    return session;
  }

  /** When the service assigned the identity, it must be the one the caller insisted on. */
  #checkAssignedIdentity(session: Session): void {
    const wanted = this.#o.avatarParticipantIdentity;
    if (wanted && wanted !== session.agent_identity) {
      throw new VisageException(
        `the Visage service assigned the avatar identity '${session.agent_identity}', not ` +
          `'${wanted}' (avatarParticipantIdentity)`,
      );
    }
  }

  /**
   * A fresh participant token for the session's room (for a client whose connection dropped
   * long ago and whose token expired); the session and its slot are unchanged.
   */
  async refreshParticipantToken(): Promise<ParticipantToken> {
    const id = this.#session?.session_id;
    if (!id) throw new VisageException('the avatar session has not started');
    const { concurrency: _concurrency, ...token } =
      await this.#control.sessions.participantToken(id);
    this.#participantToken = token;
    return token;
  }

  /** Resolves once every request queued for the session has been answered. */
  async flushRequests(): Promise<void> {
    await this.#queue?.whenIdle();
  }

  /**
   * Ends the Visage session (`DELETE`: the avatar leaves and the slot is freed) and detaches
   * from the agent session. Safe to call more than once, while `start()` is still running, and
   * after it failed. Also runs as the job's shutdown callback and when the AgentSession closes.
   */
  override async aclose(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#abort.abort(new VisageException('AvatarSession closed'));
    await this.#starting?.catch(() => undefined);
    this.#agentSession?.off(voice.AgentSessionEventTypes.Close, this.#onAgentSessionClose);
    this.#agentSession?.off(
      voice.AgentSessionEventTypes.AgentStateChanged,
      this.#handOverTranscript,
    );
    this.#idle?.stop();
    this.#unsubscribeChat?.();
    this.#subscribeAgain?.();
    this.#output?.close();
    this.#queue?.close();
    await this.#endSession('closed');
    await this.#removeAvatarOutsideJob();
    await super.aclose();
  }

  /** DELETEs the session once (the service answers 204 for an ended session too). */
  #endSession(why: string): Promise<void> {
    const id = this.#session?.session_id;
    if (!id) return Promise.resolve();
    this.#ending ??= (async () => {
      try {
        await this.#control.sessions.delete(id, { timeoutMs: DELETE_TIMEOUT_MS });
        pluginLog().info({ session_id: id, why }, 'Visage session ended');
      } catch (err) {
        pluginLog().error({ err, session_id: id }, 'could not end the Visage session');
      }
    })();
    return this.#ending;
  }

  /** The base class removes the avatar with the job's credentials; outside a job, use ours. */
  async #removeAvatarOutsideJob(): Promise<void> {
    const { livekitUrl, livekitApiKey, livekitApiSecret } = this.#livekit;
    const identity = this.#session?.agent_identity;
    if (getJobContext(false) || !identity || !this.#roomName) return;
    if (!livekitUrl || !livekitApiKey || !livekitApiSecret) return;
    try {
      const rooms = new RoomServiceClient(httpUrl(livekitUrl), livekitApiKey, livekitApiSecret);
      await rooms.removeParticipant(this.#roomName, identity);
    } catch {
      // Usually gone already: DELETE made the avatar leave.
    }
  }

  #onAgentSessionClose = (): void => {
    void this.aclose();
  };

  /**
   * Text mode: the avatar publishes the agent's transcript (`lk.transcription`) word by word as
   * it says it, and only what was heard. The agent's own transcription output would show the
   * whole reply at once, ahead of the voice, and twice. So once `session.start()` has set up
   * RoomIO (its first state change), the agent's own agent-transcript is turned off, when
   * nothing paces it to our output (`syncTranscription: false`, or no room). With the
   * framework's synchronizer in the way (`syncTranscription: true`) it stays: the synchronizer
   * needs that text for its estimate of what was said.
   */
  #handOverTranscript = (): void => {
    const session = this.#agentSession;
    if (!session || !this.#output) return;
    session.off(voice.AgentSessionEventTypes.AgentStateChanged, this.#handOverTranscript);
    if (session.output.audio !== this.#output) {
      pluginLog().warn(
        'syncTranscription is on: frontends get the framework-paced transcript and the ' +
          "avatar's; start the session with outputOptions: { syncTranscription: false }",
      );
      return;
    }
    session.output.setTranscriptionEnabled(false);
  };
}

function randomSuffix(): string {
  return randomBytes(6).toString('hex');
}

function httpUrl(url: string): string {
  return url.replace(/^ws(s?):/, 'http$1:');
}
