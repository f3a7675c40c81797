// SPDX-License-Identifier: GPL-3.0-or-later
// Injected into a product page that draws an avatar with @visage-avatar/web (the playground, the
// mint-proxy page), bundled by test/web/canvasProbe.ts: at every animation frame it records the
// mouth drawn on the page's canvas (measured on its pixels) and the loudness of the voice the
// page plays (a WebAudio analyser on the page's <audio> element's track). It reads nothing of the
// package: what a viewer sees and hears.
import { mouthOpening } from './mouthOpening.js';

export interface ProbeSample {
  /** performance.now() of the animation frame. */
  at: number;
  pixelOpen: number;
  /** RMS of the voice the page plays (0 until an <audio> element plays one). */
  rms: number;
}

export interface CanvasProbe {
  samples: ProbeSample[];
  start(canvas: HTMLCanvasElement, mouthRegion: DOMRectInit): void;
  /** The canvas's luma (BT.601 limited range), row by row, and its size. */
  luma(canvas: HTMLCanvasElement): number[];
}

const samples: ProbeSample[] = [];
const probe: CanvasProbe = {
  samples,
  start(canvas, region) {
    const g = canvas.getContext('2d')!;
    const audio = new AudioContext();
    const analyser = audio.createAnalyser();
    analyser.fftSize = 1024;
    const buffer = new Float32Array(analyser.fftSize);
    let hearing = false;
    void audio.resume();
    const sample = (at: number) => {
      requestAnimationFrame(sample);
      if (!hearing) {
        const element = document.querySelector('audio');
        const stream = element?.srcObject;
        if (stream instanceof MediaStream && stream.getAudioTracks().length > 0) {
          // Chromium feeds a remote track to WebAudio only while a media element plays it too
          // (the page's own element does).
          audio.createMediaStreamSource(stream).connect(analyser);
          hearing = true;
        }
      }
      let rms = 0;
      if (hearing) {
        analyser.getFloatTimeDomainData(buffer);
        for (const x of buffer) rms += x * x;
        rms = Math.sqrt(rms / buffer.length);
      }
      samples.push({ at, pixelOpen: mouthOpening(g, region), rms });
    };
    requestAnimationFrame(sample);
  },
  luma(canvas) {
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
    const out: number[] = [];
    for (let k = 0; k < data.length; k += 4) {
      out.push(0.257 * data[k]! + 0.504 * data[k + 1]! + 0.098 * data[k + 2]! + 16);
    }
    return out;
  },
};
(window as unknown as { canvasProbe: CanvasProbe }).canvasProbe = probe;
