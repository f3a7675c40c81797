// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  ChannelClosedError,
  IpcPeer,
  RemoteError,
  type IpcChannel,
} from '../../../src/media/mediaProcesses/ipcPeer.js';
import {
  remoteAssets,
  serveAssets,
} from '../../../src/media/mediaProcesses/mediaProcessProtocol.js';

/** Two ends of a channel that deliver asynchronously, in order, structured-cloned (as IPC does). */
function channelPair(): [IpcChannel & { closed: boolean }, IpcChannel & { closed: boolean }] {
  const make = () => {
    const events = new EventEmitter();
    const end = {
      closed: false,
      peer: undefined as unknown as EventEmitter,
      send(message: unknown, callback: (error: Error | null) => void) {
        if (end.closed) {
          setImmediate(() => callback(new Error('channel closed')));
          return false;
        }
        const copy = structuredClone(message);
        setImmediate(() => {
          end.peer.emit('message', copy);
          callback(null);
        });
        return true;
      },
      on: (event: 'message', l: (m: unknown) => void) => events.on(event, l),
      off: (event: 'message', l: (m: unknown) => void) => events.off(event, l),
      events,
    };
    return end;
  };
  const a = make();
  const b = make();
  a.peer = b.events;
  b.peer = a.events;
  return [a, b];
}

describe('IpcPeer', () => {
  it('answers requests, keeps events and requests in the order they were sent', async () => {
    const [a, b] = channelPair();
    const api = new IpcPeer(a);
    const worker = new IpcPeer(b);
    const seen: string[] = [];
    worker.on('speak', (body: { text: string }) => seen.push(`speak:${body.text}`));
    worker.handle('interrupt', () => {
      seen.push('interrupt');
      return { interrupted: true, droppedUtterances: seen.length - 1 };
    });
    api.emit('speak', { text: 'one' });
    api.emit('speak', { text: 'two' });
    const outcome = api.request('interrupt');
    api.emit('speak', { text: 'three' });
    expect(await outcome).toEqual({ interrupted: true, droppedUtterances: 2 });
    await sleep(10);
    expect(seen).toEqual(['speak:one', 'speak:two', 'interrupt', 'speak:three']);
  });

  it('carries PCM as a typed array', async () => {
    const [a, b] = channelPair();
    const api = new IpcPeer(a);
    const worker = new IpcPeer(b);
    worker.handle('sum', (pcm: Float32Array) => pcm.reduce((s, v) => s + v, 0));
    expect(await api.request('sum', new Float32Array([0.25, 0.5, 0.25]))).toBe(1);
  });

  it('sends a failure back with its class name and message', async () => {
    const [a, b] = channelPair();
    const api = new IpcPeer(a);
    const worker = new IpcPeer(b);
    worker.handle('start', () => {
      const err = new Error('could not join room-1');
      err.name = 'MediaUnavailableError';
      throw err;
    });
    const failure = await api.request('start').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(RemoteError);
    expect((failure as RemoteError).remote).toEqual({
      name: 'MediaUnavailableError',
      message: 'could not join room-1',
    });
    await expect(api.request('nothing-handles-this')).rejects.toThrow(/no handler/);
  });

  it('fails every pending request when the channel closes (the other process died)', async () => {
    const [a, b] = channelPair();
    const api = new IpcPeer(a);
    const worker = new IpcPeer(b);
    worker.handle('slow', () => new Promise(() => undefined));
    const pending = api.request('slow');
    api.close('media process 0 exited');
    await expect(pending).rejects.toBeInstanceOf(ChannelClosedError);
    await expect(api.request('slow')).rejects.toThrow('media process 0 exited');
    a.closed = true;
    // A send on a dead channel closes the peer (failing the request) instead of crashing.
    const other = new IpcPeer(a);
    await expect(other.request('anything')).rejects.toBeInstanceOf(ChannelClosedError);
    other.emit('speaking', { speaking: true });
  });

  it("lets a worker ask the API process for an asset's bytes by id", async () => {
    const [a, b] = channelPair();
    const api = new IpcPeer(a);
    const worker = new IpcPeer(b);
    const stored = new Map([['file_photo', new Uint8Array([1, 2, 3])]]);
    serveAssets(api, {
      get: async (id) => {
        const bytes = stored.get(id);
        if (!bytes) throw new Error(`no stored file ${id}`);
        return bytes;
      },
    });
    const assets = remoteAssets(worker);
    expect([...(await assets.get('file_photo'))]).toEqual([1, 2, 3]);
    await expect(assets.get('file_missing')).rejects.toThrow('no stored file file_missing');
  });
});
