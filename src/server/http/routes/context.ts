// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { ApiKeyRecord, Store } from '../../store/store.js';
import type { AvatarBuilder } from '../../assets/avatarBuilder.js';
import type { Limits } from '../../config.js';
import type { StockPreviews } from '../../assets/stockPreviews.js';
import type { FileStorage } from '../../assets/fileStorage.js';
import type { SessionManager } from '../../sessions/sessionManager.js';
import type { UrlFetcher } from '../../assets/urlFetcher.js';
import type { VoiceAnalyzer } from '../../assets/voiceClip.js';
import type { AtlasSigner } from '../../assets/atlasSignature.js';
import type { AtlasDelivery } from '../../assets/atlasDelivery.js';

/** What every route handler may use; built once by `createApp`. */
export interface AppDeps {
  store: Store;
  sessions: SessionManager;
  files: FileStorage;
  urlFetcher: UrlFetcher;
  analyzeVoice: VoiceAnalyzer;
  avatarBuilder: AvatarBuilder;
  stockPreviews: StockPreviews;
  /** Signs and checks the keyless atlas URLs. */
  atlasSigner: AtlasSigner;
  /** The atlases those URLs serve, compressed and kept on disk. */
  atlasDelivery: AtlasDelivery;
  /**
   * The service's public origin (and path prefix) for the absolute URLs it hands out (a `client`
   * session's `atlas_url`); absent: the origin the request came to.
   */
  publicUrl?: string;
  limits: Limits;
  version: string;
  mediaKind: string;
  /** Resolves when the node is ready for new sessions; throws the ApiError that says why not. */
  readiness: () => Promise<void>;
  log: Logger;
  /** Pages outside the API that the caller mounts (`visage dev`'s playground); default none. */
  pages?: readonly MountedPages[];
}

/**
 * A hono app mounted at `path` beside the API (never under `/v1`): the server knows nothing of
 * what it serves. `visage dev` mounts its playground this way and `visage serve` mounts none, so
 * a page that mints tokens for the embedded LiveKit exists only where the CLI asks for it.
 */
export interface MountedPages {
  path: string;
  app: Hono;
}

/** Hono context variables set by the middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    key: ApiKeyRecord;
    /** The hash of the request's secret (sha256, as stored), once it named one. */
    secretHash: string;
    log: Logger;
  };
}
