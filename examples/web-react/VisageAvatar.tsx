// SPDX-License-Identifier: Apache-2.0
// A React component that draws a Visage avatar of a `mode: "client"` session on a canvas, with
// @visage-avatar/web. Give it the page's livekit-client `Room` and mount it before the room
// connects: the avatar opens its face stream to each participant when they join.
import { useEffect, useRef, type CSSProperties } from 'react';
import type { Room } from 'livekit-client';
import { VisageAvatar as AvatarDrawer } from '@visage-avatar/web';

export interface VisageAvatarProps {
  room: Room;
  /** The session's `atlas_url` (else the one the face stream's `start` line names). */
  atlasUrl?: string;
  /** The avatar participant's identity, the session's `agent_identity` (else whoever sends the face). */
  participant?: string;
  /** Called when the first face is drawn. */
  onReady?: () => void;
  /** Called when the avatar cannot be drawn (its atlas could not be loaded). */
  onError?: (err: unknown) => void;
  style?: CSSProperties;
}

export function VisageAvatar({
  room,
  atlasUrl,
  participant,
  onReady,
  onError,
  style,
}: VisageAvatarProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  // The callbacks as they are now, without restarting the avatar when a render makes new ones.
  const callbacks = useRef({ onReady, onError });
  useEffect(() => {
    callbacks.current = { onReady, onError };
  });
  useEffect(() => {
    const avatar = new AvatarDrawer({ room, canvas: canvas.current!, atlasUrl, participant });
    let closed = false;
    avatar.ready.then(
      () => callbacks.current.onReady?.(),
      (err: unknown) => {
        if (!closed) callbacks.current.onError?.(err);
      },
    );
    return () => {
      closed = true;
      avatar.close(); // stops reading and drawing, and frees the room's `visage.face` topic
    };
  }, [room, atlasUrl, participant]);
  // Sized to the avatar (512 x 512) once its atlas is loaded; scale it with CSS.
  return <canvas ref={canvas} width={512} height={512} style={style} />;
}
