// SPDX-License-Identifier: GPL-3.0-or-later
import { parentPort } from 'node:worker_threads';
import { AudioDecodeError, AudioTooLongError, decodeAudio } from '../audio/index.js';
import { detectSpeech, SileroVad } from '../voiceActivity/index.js';
import type { AudioTask, AudioThreadReply } from './audioThreadProtocol.js';

/**
 * One thread of the audio thread pool: decodes untrusted audio and runs the voice-activity
 * detector, off the event loop and inside the heap limit the pool gave it.
 */
let vad: Promise<SileroVad> | undefined;

async function run(task: AudioTask) {
  switch (task.kind) {
    case 'decode':
      return decodeAudio(task.bytes, {
        contentType: task.contentType,
        maxDurationMs: task.maxDurationMs,
      });
    case 'detectSpeech':
      return detectSpeech(await loadVad(), task.mono, task.sampleRate);
    case 'loadSpeechModel':
      await loadVad();
      return { speechModelLoaded: true as const };
  }
}

/** The model, loaded once per thread; a failed load is tried again by the next task. */
function loadVad(): Promise<SileroVad> {
  if (!vad) {
    vad = SileroVad.load();
    vad.catch(() => (vad = undefined));
  }
  return vad;
}

parentPort!.on('message', async ({ id, task }: { id: number; task: AudioTask }) => {
  let reply: AudioThreadReply;
  const transfer: ArrayBuffer[] = [];
  try {
    let result = await run(task);
    if ('mono' in result) {
      // Hand the samples over without a copy, unless they are a view into a larger buffer
      // (a decoder's memory), which must not move.
      const { mono } = result;
      const owned = mono.byteOffset === 0 && mono.byteLength === mono.buffer.byteLength;
      result = { ...result, mono: owned ? mono : mono.slice() };
      transfer.push(result.mono.buffer as ArrayBuffer);
    }
    reply = { id, result };
  } catch (error) {
    reply = {
      id,
      error: {
        message: error instanceof Error ? error.message : String(error),
        code: error instanceof AudioDecodeError ? error.code : undefined,
        limitMs: error instanceof AudioTooLongError ? error.limitMs : undefined,
      },
    };
  }
  parentPort!.postMessage(reply, transfer);
});
