/** Who is asking: what the caller resolver (resolve-caller.ts) makes of a request's credentials. */

/** A Passport visa whose signature, issuer, expiry and conditions were checked (passports.ts). */
export interface VerifiedVisa {
  /** The visa's `iss` and `sub`: its visa identity. */
  issuer: string;
  subject: string;
  type: string;
  value: string;
  source: string;
  by?: string;
  /** Seconds since the epoch. */
  asserted: number;
  expiresAt: number;
}

export type Caller =
  /** No credentials. */
  | { kind: 'anonymous' }
  /** A verified token of a trusted issuer, with the groups it carries and the visas that count. */
  | { kind: 'identity'; issuer: string; subject: string; groups: readonly string[]; visas: readonly VerifiedVisa[] }
  /** An API key of the policy, by its name. */
  | { kind: 'key'; name: string };

export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous' });

/** The caller as an access log line names them: issuer and subject, the key's name, or `-`. */
export function callerInLog(caller: Caller): string {
  switch (caller.kind) {
    case 'anonymous':
      return '-';
    case 'key':
      return `key:${loggable(caller.name)}`;
    case 'identity':
      return `${loggable(caller.issuer)}#${loggable(caller.subject)}`;
  }
}

/** Text from a request made safe for one log line: whitespace, controls and backslashes escaped as `\u{hex}`, at most 200 characters. */
export function loggable(text: string): string {
  const clipped = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return clipped.replace(/[\s\p{C}\\]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
