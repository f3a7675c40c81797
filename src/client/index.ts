// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * `visage/client`: the typed HTTP client of the Visage API, which is `@visage-avatar/client`'s
 * (one class: a `VisageClient` from either package is an instance of both).
 */
export * from '@visage-avatar/client';
