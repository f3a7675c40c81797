// SPDX-License-Identifier: Apache-2.0
// The app's entry: ?url=<livekit_url>&token=<participant_token>&atlas=<atlas_url> joins at once;
// without them, a form asks.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';

const query = new URLSearchParams(location.search);
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App
      initial={{
        url: query.get('url') ?? undefined,
        token: query.get('token') ?? undefined,
        atlasUrl: query.get('atlas') ?? undefined,
      }}
    />
  </StrictMode>,
);
