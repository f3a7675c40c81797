// SPDX-License-Identifier: Apache-2.0
import type { JobContext, voice } from '@livekit/agents';

// rtc-node's types in the plugin's public signatures, as @livekit/agents declares them. In a
// CommonJS project the framework's declarations (.d.cts) re-export its ES module ones, so its
// `ctx.room` is rtc-node's ES module `Room`; rtc-node's own CommonJS declarations are other
// classes to TypeScript ("separate declarations of a private property"), and an import of
// '@livekit/rtc-node' in the plugin's .d.cts would read those. Taken through the framework, the
// types are the framework's in both module systems, so `avatar.start(session, ctx.room)` type
// checks in either (test/packaging/readmeAgent.slow.test.ts, its CommonJS project).

/** The room an agent's job is in (`ctx.room`). */
export type Room = JobContext['room'];

/** An audio frame, as an agent session's audio output receives it. */
export type AudioFrame = Parameters<voice.AudioOutput['captureFrame']>[0];
