/**
 * htsget's error form, `{"htsget": {"error": TYPE, "message": ...}}` with the type's status (htsget
 * 1.3, "Errors"). The interface throws HtsgetError; errors of the HTTP layer (a body too large, a
 * method not allowed) are written in the same form, their types chosen from their statuses.
 */
import { GAException, type ErrorKindName } from '../../protocol/errors.js';

/** The error types of the specification, and the status each goes with. */
const TYPES = {
  InvalidAuthentication: 'invalidCredentials',
  PermissionDenied: 'forbidden',
  NotFound: 'notFound',
  PayloadTooLarge: 'bodyTooLarge',
  UnsupportedFormat: 'invalidRequest',
  InvalidInput: 'invalidRequest',
  InvalidRange: 'invalidRequest',
} as const satisfies Record<string, ErrorKindName>;

export type HtsgetErrorType = keyof typeof TYPES;

export class HtsgetError extends GAException {
  constructor(
    readonly type: HtsgetErrorType,
    message: string,
  ) {
    super(TYPES[type], message);
  }
}

export const invalidInput = (message: string) => new HtsgetError('InvalidInput', message);

/** The htsget type of an error the HTTP layer raised before the interface saw the request. */
function typeOf(error: GAException): string {
  if (error instanceof HtsgetError) return error.type;
  switch (error.kind) {
    case 'notFound':
    case 'noSuchPath':
      return 'NotFound';
    case 'bodyTooLarge':
      return 'PayloadTooLarge';
    case 'forbidden':
      return 'PermissionDenied';
    case 'invalidCredentials':
      return 'InvalidAuthentication';
    case 'rangeNotSatisfiable':
      return 'InvalidRange';
    case 'methodNotAllowed':
      return 'MethodNotAllowed';
    case 'tooManyRequests':
      return 'TooManyRequests';
    case 'unavailable':
      return 'ServiceUnavailable';
    default:
      return error.status >= 500 ? 'InternalError' : 'InvalidInput';
  }
}

export function writeHtsgetError(error: GAException): { contentType: string; body: string } {
  return { contentType: 'application/json; charset=utf-8', body: JSON.stringify({ htsget: { error: typeOf(error), message: error.message } }) };
}
