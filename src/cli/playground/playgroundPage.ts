// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The playground's HTML: its script (`/playground/playground.js`, the bundle) does the rest. Its
 * only styles are inline, and the Content-Security-Policy in playgroundPages.ts allows nothing
 * else: no script from anywhere but this server.
 */
export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Visage playground</title>
    <style>
      body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
      h1 { font-size: 1.25rem; margin: 0 0 0.25rem; }
      .hint { color: #666; margin: 0 0 1rem; max-width: 60rem; }
      main { display: flex; gap: 1.5rem; flex-wrap: wrap; align-items: flex-start; }
      video, canvas { width: 512px; max-width: 100%; aspect-ratio: 1; background: #222; display: block; }
      [hidden] { display: none !important; }
      .side { flex: 1; min-width: 18rem; max-width: 36rem; }
      .controls { display: flex; gap: 0.5rem; margin: 0.5rem 0; }
      #status { color: #555; margin: 0.5rem 0; }
      #state { font-weight: 600; }
      #transcript { height: 22rem; overflow-y: auto; border: 1px solid #ddd; padding: 0.5rem; }
      .line { margin: 0.3rem 0; }
      .speaking { color: #666; }
      .who { font-weight: 600; }
      form { display: flex; gap: 0.5rem; margin-top: 0.5rem; }
      input { flex: 1; padding: 0.3rem; }
    </style>
  </head>
  <body>
    <h1>Visage playground</h1>
    <p class="hint">
      Joins a new room of the embedded LiveKit server; the agent workers registered with it are
      dispatched into it, and your agent's avatar joins and talks. Type to your agent, or turn the
      microphone on (your agent hears it if it has speech recognition). A worker registered with
      an agent name: open <code>/playground?agent=NAME</code>. Only <code>visage dev</code> serves
      this page.
    </p>
    <main>
      <div>
        <video id="avatar" autoplay playsinline muted></video>
        <canvas id="drawn" width="512" height="512" hidden></canvas>
        <div class="controls">
          <label
            >Face:
            <select id="face">
              <option value="video">video (drawn on the server)</option>
              <option value="client">drawn in the browser (client mode)</option>
            </select></label
          >
        </div>
        <div class="controls">
          <button id="start">Talk to your agent</button>
          <button id="mic" disabled>Turn the microphone on</button>
        </div>
        <div id="status">Not connected.</div>
        <div>Agent state: <span id="state">(no agent yet)</span></div>
      </div>
      <div class="side">
        <div id="transcript" aria-live="polite"></div>
        <form id="chat">
          <input id="text" placeholder="Type to your agent" autocomplete="off" disabled />
          <button>Send</button>
        </form>
      </div>
    </main>
    <script type="module" src="/playground/playground.js"></script>
  </body>
</html>
`;
