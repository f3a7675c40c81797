// SPDX-License-Identifier: GPL-3.0-or-later
const MAX_REASON_CHARS = 300;

/** The provider's own words from an error body (JSON `detail`/`message`/`error`, else text). */
export function providerReason(body: string): string {
  let reason = body.trim();
  try {
    const json = JSON.parse(body) as unknown;
    const pick = (v: unknown): string | undefined => {
      if (typeof v === 'string') return v;
      if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        return pick(o.message) ?? pick(o.detail) ?? pick(o.error) ?? pick(o.title);
      }
      return undefined;
    };
    reason = pick(json) ?? reason;
  } catch {
    // Not JSON: the text itself.
  }
  reason = reason.replace(/\s+/g, ' ');
  return reason.length > MAX_REASON_CHARS
    ? `${reason.slice(0, MAX_REASON_CHARS)}…`
    : reason || 'no reason given';
}
