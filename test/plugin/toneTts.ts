// SPDX-License-Identifier: GPL-3.0-or-later
// A TTS for audio-mode tests: it "speaks" a 300 Hz tone, 50 ms per character, so the avatar has
// real audio to play and a test can hear it. Non-streaming, as many TTS plugins are: the
// framework wraps it in its sentence StreamAdapter.
import { type APIConnectOptions, shortuuid, tts } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';

const SAMPLE_RATE = 24_000;
const FRAME_SAMPLES = SAMPLE_RATE / 50;

export class ToneTTS extends tts.TTS {
  label = 'test.ToneTTS';

  constructor() {
    super(SAMPLE_RATE, 1, { streaming: false });
  }

  synthesize(text: string, connOptions?: APIConnectOptions, abortSignal?: AbortSignal) {
    return new ToneStream(text, this, connOptions, abortSignal);
  }

  stream(): tts.SynthesizeStream {
    throw new Error('ToneTTS does not stream');
  }
}

class ToneStream extends tts.ChunkedStream {
  label = 'test.ToneStream';

  protected async run(): Promise<void> {
    const requestId = shortuuid('tone_');
    const frames = Math.max(1, Math.round((this.inputText.length * 50) / 20));
    for (let f = 0; f < frames; f++) {
      const data = new Int16Array(FRAME_SAMPLES);
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        const t = (f * FRAME_SAMPLES + i) / SAMPLE_RATE;
        data[i] = Math.round(8000 * Math.sin(2 * Math.PI * 300 * t));
      }
      this.queue.put({
        requestId,
        segmentId: requestId,
        frame: new AudioFrame(data, SAMPLE_RATE, 1, FRAME_SAMPLES),
        final: f === frames - 1,
      });
    }
  }
}
