/**
 * Beacon's error form (framework `beaconErrorResponse`): `{"meta": ..., "error": {"errorCode",
 * "errorMessage"}}`, the code being the HTTP status. The interface throws BeaconError; errors the HTTP
 * layer raises before a route runs (a body that is not JSON, too large, a method not allowed) are
 * written in the same form, with their own status.
 */
import { GAException, type ErrorKindName } from '../../protocol/errors.js';
import { informationalMeta, requestSummaryOf, type BeaconContext } from './envelope.js';

const KINDS = { 400: 'invalidRequest', 404: 'notFound' } as const satisfies Record<number, ErrorKindName>;

export class BeaconError extends GAException {
  constructor(status: keyof typeof KINDS, message: string) {
    super(KINDS[status], message);
  }
}

/** A 400 naming what was wrong with which parameter. */
export const badRequest = (message: string) => new BeaconError(400, message);
export const notFound = (message: string) => new BeaconError(404, message);

/** The body of an error reply, in Beacon's form. */
export function writeBeaconError(error: GAException, context: BeaconContext): { contentType: string; body: string } {
  const meta = { ...informationalMeta(context), returnedGranularity: 'boolean', receivedRequestSummary: requestSummaryOf(undefined) };
  const body = { meta, error: { errorCode: error.status, errorMessage: error.message } };
  return { contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) };
}
