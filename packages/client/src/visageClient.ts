// SPDX-License-Identifier: Apache-2.0
import { setTimeout as sleep } from 'node:timers/promises';
import { FormData, request, type Dispatcher } from 'undici';
import type {
  Avatar,
  CreateAvatarRequest,
  CreateSessionRequest,
  CreateVoiceRequest,
  CreatedSession,
  ErrorEnvelope,
  FileObject,
  Health,
  InterruptResult,
  List,
  ListQuery,
  ListSessionsQuery,
  ParticipantToken,
  Readiness,
  Session,
  UtteranceAccepted,
  Voice,
} from './api/index.js';
import { ENDPOINTS, type EndpointName } from './api/endpoints.js';
import {
  apiErrorFor,
  concurrencyFrom,
  VisageApiError,
  VisageConnectionError,
  VisageError,
  type Concurrency,
} from './errors.js';

export interface VisageClientOptions {
  /** `sk_…` secret key. Default: $VISAGE_API_KEY. */
  apiKey?: string;
  /** Base URL of the service. Default: $VISAGE_API_URL, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** Per-request timeout (ms), retries' waits excluded. Default 30 s. */
  timeoutMs?: number;
  /** How many times a 429 is retried after its Retry-After. Default 2. */
  maxRetries?: number;
  /** Longest single Retry-After wait honoured (s); a longer one is raised at once. Default 30. */
  maxRetryAfterSeconds?: number;
  /** undici dispatcher (connection pool, proxy). */
  dispatcher?: Dispatcher;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** This call's 429 retries (default: the client's `maxRetries`). */
  maxRetries?: number;
}

/** Session endpoints also report the key's concurrency from the response headers. */
export type WithConcurrency<T> = T & { readonly concurrency: Concurrency };

/** Retry-After to use when a 429 carries none (the specification's fallback). */
const FALLBACK_RETRY_AFTER_SECONDS = 5;
const RETRIED_CODES = new Set(['concurrency_cap', 'platform_busy', 'too_many_requests']);

type Query = Record<string, string | number | undefined>;

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Query;
  json?: unknown;
  body?: Uint8Array | Blob | FormData;
  contentType?: string;
  options?: RequestOptions;
  /** The success body is bytes (an image), not JSON. */
  binary?: boolean;
}

/**
 * Typed client of the Visage API, for backends (a "mint proxy") and the LiveKit Agents plugin.
 * One method per endpoint; types come from the wire contract.
 */
export class VisageClient {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly config: Required<
    Omit<VisageClientOptions, 'dispatcher' | 'apiKey' | 'baseUrl'>
  > & {
    dispatcher?: Dispatcher;
  };

  constructor(options: VisageClientOptions = {}) {
    const apiKey = options.apiKey ?? process.env.VISAGE_API_KEY;
    if (!apiKey) throw new VisageError('VisageClient needs apiKey (or $VISAGE_API_KEY)');
    if (!apiKey.startsWith('sk_')) throw new VisageError('apiKey must be a secret key (sk_…)');
    this.apiKey = apiKey;
    this.baseUrl = (
      options.baseUrl ??
      process.env.VISAGE_API_URL ??
      'http://127.0.0.1:8080'
    ).replace(/\/+$/, '');
    this.config = {
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: options.maxRetries ?? 2,
      maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 30,
      dispatcher: options.dispatcher,
    };
  }

  readonly files = {
    /** Uploads a reference clip (wav, mp3, ogg/opus, webm, m4a, flac). */
    upload: (
      clip: Uint8Array | Blob,
      filename = 'clip',
      options?: RequestOptions,
    ): Promise<FileObject> => {
      const form = new FormData();
      const blob = clip instanceof Blob ? clip : new Blob([clip as Uint8Array<ArrayBuffer>]);
      form.append('file', blob, filename);
      return this.call({ ...route('uploadFile'), body: form, options });
    },
    list: (query: ListQuery = {}, options?: RequestOptions): Promise<List<FileObject>> =>
      this.call({ ...route('listFiles'), query: { ...query }, options }),
    get: (id: string, options?: RequestOptions): Promise<FileObject> =>
      this.call({ ...route('getFile', id), options }),
    /** Deletes an uploaded file; voices made from it keep working. Deleting again is fine. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.call({ ...route('deleteFile', id), options });
    },
  };

  readonly voices = {
    create: (req: CreateVoiceRequest, options?: RequestOptions): Promise<Voice> =>
      this.call({ ...route('createVoice'), json: req, options }),
    list: (query: ListQuery = {}, options?: RequestOptions): Promise<List<Voice>> =>
      this.call({ ...route('listVoices'), query: { ...query }, options }),
    get: (id: string, options?: RequestOptions): Promise<Voice> =>
      this.call({ ...route('getVoice', id), options }),
    /** Deletes a cloned voice; live sessions using it keep it. Deleting again is fine. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.call({ ...route('deleteVoice', id), options });
    },
  };

  readonly avatars = {
    /**
     * Makes a photo avatar from a portrait (JPEG, PNG or WebP with one frontal face; the
     * largest face of several): the picture's bytes, or `{ image_url }` for the service to
     * fetch. The build takes a few seconds within the call.
     */
    create: (
      req:
        | { name: string; image: Uint8Array | Blob; filename?: string; voice_id?: string }
        | CreateAvatarRequest,
      options?: RequestOptions,
    ): Promise<Avatar> => {
      if ('image_url' in req) return this.call({ ...route('createAvatar'), json: req, options });
      const form = new FormData();
      const blob =
        req.image instanceof Blob ? req.image : new Blob([req.image as Uint8Array<ArrayBuffer>]);
      form.append('image', blob, req.filename ?? 'portrait');
      form.append('name', req.name);
      if (req.voice_id !== undefined) form.append('voice_id', req.voice_id);
      return this.call({ ...route('createAvatar'), body: form, options });
    },
    /** The account's photo avatars (newest first), then the stock avatars. */
    list: (query: ListQuery = {}, options?: RequestOptions): Promise<List<Avatar>> =>
      this.call({ ...route('listAvatars'), query: { ...query }, options }),
    get: (id: string, options?: RequestOptions): Promise<Avatar> =>
      this.call({ ...route('getAvatar', id), options }),
    /** The neutral frame, 512x512 PNG bytes. */
    preview: async (id: string, options?: RequestOptions): Promise<Uint8Array> =>
      (await this.send({ ...route('getAvatarPreview', id), options, binary: true }))
        .body as Uint8Array,
    /** Deletes a photo avatar; live sessions keep it, new ones get 404. Deleting again is fine. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.call({ ...route('deleteAvatar', id), options });
    },
  };

  readonly sessions = {
    create: (req: CreateSessionRequest, options?: RequestOptions) =>
      this.sessionCall<CreatedSession>({
        ...route('createSession'),
        json: req,
        options,
      }),
    list: (query: ListSessionsQuery = {}, options?: RequestOptions) =>
      this.sessionCall<List<Session>>({
        ...route('listSessions'),
        query: { ...query },
        options,
      }),
    get: (id: string, options?: RequestOptions) =>
      this.sessionCall<Session>({ ...route('getSession', id), options }),
    speak: (id: string, text: string, options?: RequestOptions) =>
      this.sessionCall<UtteranceAccepted>({
        ...route('speak', id),
        json: { text },
        options,
      }),
    /**
     * Plays audio: raw bytes with their Content-Type (audio/wav, audio/mpeg, audio/ogg,
     * audio/webm, audio/L16;rate=N;channels=1), or `{ file_id }` of an uploaded file.
     */
    audio: (
      id: string,
      audio: { bytes: Uint8Array; contentType: string } | { file_id: string },
      opts: { text?: string } & RequestOptions = {},
    ) =>
      this.sessionCall<UtteranceAccepted>({
        ...route('audio', id),
        query: { text: opts.text },
        ...('file_id' in audio
          ? { json: { file_id: audio.file_id } }
          : { body: audio.bytes, contentType: audio.contentType }),
        options: opts,
      }),
    interrupt: (id: string, options?: RequestOptions) =>
      this.sessionCall<InterruptResult>({
        ...route('interrupt', id),
        options,
      }),
    setWaiting: (id: string, waiting: boolean, options?: RequestOptions) =>
      this.sessionCall<Session>({
        ...route('waitingState', id),
        json: { waiting },
        options,
      }),
    /** A fresh participant token for a live session whose client token expired. */
    participantToken: (id: string, options?: RequestOptions) =>
      this.sessionCall<ParticipantToken>({
        ...route('participantToken', id),
        options,
      }),
    /** Ends the session and frees its slot; ending an ended session is fine. */
    delete: (id: string, options?: RequestOptions) =>
      this.sessionCall<object>({ ...route('deleteSession', id), options }),
  };

  /** Liveness: the process is up (`GET /healthz`). */
  health(options?: RequestOptions): Promise<Health> {
    return this.call({ ...route('health'), options });
  }

  /**
   * Readiness (`GET /readyz`): the node takes new sessions and its database answers. Throws
   * VisageApiError (503 `database_unavailable` or `media_unavailable`) when it is not ready.
   */
  readiness(options?: RequestOptions): Promise<Readiness> {
    return this.call({ ...route('readiness'), options });
  }

  private async sessionCall<T extends object>(call: Call): Promise<WithConcurrency<T>> {
    const { body, headers } = await this.send(call);
    const concurrency = concurrencyFrom(headers) ?? { active: NaN, max: NaN };
    return Object.assign((body ?? {}) as T, { concurrency });
  }

  private async call<T>(call: Call): Promise<T> {
    return (await this.send(call)).body as T;
  }

  /** One logical call: the HTTP exchange, with 429s retried after their Retry-After. */
  private async send(call: Call): Promise<{ body: unknown; headers: Headers }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.exchange(call);
      } catch (err) {
        if (!(err instanceof VisageApiError) || err.status !== 429) throw err;
        const maxRetries = call.options?.maxRetries ?? this.config.maxRetries;
        if (!RETRIED_CODES.has(err.code) || attempt >= maxRetries) throw err;
        const wait = err.retryAfterSeconds ?? FALLBACK_RETRY_AFTER_SECONDS;
        if (wait > this.config.maxRetryAfterSeconds) throw err;
        // An abort fails the call with its own reason, not timers/promises' AbortError.
        const signal = call.options?.signal;
        await sleep(wait * 1000, undefined, { signal }).catch(() => signal!.throwIfAborted());
      }
    }
  }

  private async exchange(call: Call): Promise<{ body: unknown; headers: Headers }> {
    const url = new URL(this.baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.apiKey}`,
      accept: call.binary ? '*/*' : 'application/json',
    };
    let body: string | Uint8Array | Blob | FormData | undefined = call.body;
    if (call.json !== undefined) {
      body = JSON.stringify(call.json);
      headers['content-type'] = 'application/json';
    } else if (call.contentType) {
      headers['content-type'] = call.contentType;
    }
    const timeout = AbortSignal.timeout(call.options?.timeoutMs ?? this.config.timeoutMs);
    const signal = call.options?.signal ? AbortSignal.any([call.options.signal, timeout]) : timeout;
    // undici's own request API, not fetch: the same exchange runs less code (no WHATWG
    // Request/Response/streams). An agent calls speak and interrupt now and then, so its calls
    // run cold, and cold code is slow: on the 2-core VM of bench/results/, from the call to the request on
    // the socket took 15.1 ms (median) through fetch and 11.8 ms through request, 1 s apart.
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: call.method,
        headers,
        body: body as never,
        signal,
        ...(this.config.dispatcher ? { dispatcher: this.config.dispatcher } : {}),
      });
    } catch (err) {
      if (call.options?.signal?.aborted) throw call.options.signal.reason;
      const what = timeout.aborted ? 'timed out' : 'failed';
      throw new VisageConnectionError(`${call.method} ${call.path} ${what}`, { cause: err });
    }
    const responseHeaders = headersOf(res.headers);
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    if (call.binary && ok) {
      return { body: new Uint8Array(await res.body.arrayBuffer()), headers: responseHeaders };
    }
    const text = await res.body.text();
    // Tolerate empty and non-JSON bodies (DELETE may answer either).
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!ok) {
      throw apiErrorFor(
        res.statusCode,
        (parsed as ErrorEnvelope | undefined)?.error,
        responseHeaders,
      );
    }
    return { body: parsed, headers: responseHeaders };
  }
}

/** A response's headers (node's lower-cased record) as a `Headers`. */
function headersOf(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

/** Method and path of an endpoint, from the contract's endpoint table (`{id}` filled in). */
function route(name: EndpointName, id?: string): Pick<Call, 'method' | 'path'> {
  const ep = ENDPOINTS[name];
  const path = ep.path.includes('{id}')
    ? ep.path.replace('{id}', encodeURIComponent(id ?? ''))
    : ep.path;
  return { method: ep.method, path };
}
