/**
 * refget's error form. The specification names an error type per status and defines no body; this
 * interface answers `{"error": TYPE, "message": WHAT}`, the type as refget names it, the message saying
 * what was wrong and with which parameter or id.
 */
import { STATUS_CODES } from 'node:http';
import type { GAException } from '../../protocol/errors.js';
import type { Reply } from '../../protocol/reply.js';

const TYPES = {
  400: 'Bad Request',
  404: 'Not Found',
  406: 'Not Acceptable',
  409: 'Conflict',
  416: 'Range Not Satisfiable',
} as const;

export type RefgetStatus = keyof typeof TYPES;

export class RefgetError extends Error {
  constructor(
    readonly status: RefgetStatus,
    message: string,
  ) {
    super(message);
    this.name = 'RefgetError';
  }
}

export function errorReply(error: RefgetError): Reply {
  const body = Buffer.from(JSON.stringify({ error: TYPES[error.status], message: error.message }));
  return { kind: 'exact', status: error.status, headers: { 'content-type': 'application/json; charset=utf-8' }, length: body.length, pieces: [body] };
}

/** An error of the HTTP layer (refused credentials, a rate limit) in refget's form, typed by its status. */
export function writeRefgetError(error: GAException): { contentType: string; body: string } {
  const type = TYPES[error.status as RefgetStatus] ?? STATUS_CODES[error.status] ?? 'Error';
  return { contentType: 'application/json; charset=utf-8', body: JSON.stringify({ error: type, message: error.message }) };
}
