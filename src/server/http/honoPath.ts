// SPDX-License-Identifier: GPL-3.0-or-later
/** An endpoint table path (`/v1/sessions/{id}`) as a hono route (`/v1/sessions/:id`). */
export const honoPath = (path: string): string => path.replace('{id}', ':id');
