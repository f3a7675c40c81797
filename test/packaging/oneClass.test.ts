// SPDX-License-Identifier: GPL-3.0-or-later
// The service (`visage`, `visage/client`) re-exports the packages' own code, so what an agent or
// backend gets from either is the same class: a `VisageClient` made through `visage` is an
// instance of `@visage-avatar/client`'s, an error the plugin throws is caught by the client's
// class.
import * as client from '@visage-avatar/client';
import * as plugin from '@visage-avatar/livekit-plugin';
import { describe, expect, it } from 'vitest';
import * as serviceClient from '../../src/client/index.js';
import * as service from '../../src/index.js';

describe('the service and the packages', () => {
  it('share one VisageClient, one set of error classes and one AvatarSession', () => {
    const made = new service.VisageClient({ apiKey: 'sk_test', baseUrl: 'http://127.0.0.1:9' });
    expect(made).toBeInstanceOf(client.VisageClient);
    expect(new client.VisageClient({ apiKey: 'sk_test' })).toBeInstanceOf(
      serviceClient.VisageClient,
    );
    expect(service.VisageApiError).toBe(client.VisageApiError);
    expect(service.VisageRateLimitError).toBe(client.VisageRateLimitError);
    expect(service.AvatarSession).toBe(plugin.AvatarSession);
    expect(service.VisageException).toBe(plugin.VisageException);
  });

  it('re-export every name of both packages, and nothing else', () => {
    const names = (m: object) => Object.keys(m).sort();
    expect(names(serviceClient)).toEqual(names(client));
    expect(names(service)).toEqual([...new Set([...names(client), ...names(plugin)])].sort());
  });
});
