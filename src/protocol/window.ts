/** The window of a search over a reference, one rule for every area that searches by position. */
import { GAException } from './errors.js';

/**
 * `[start, end)` of a search: `start` absent means 0 and `end` absent (or 0) means to the end of the
 * reference (`end` is then +Infinity), since a proto3 client cannot send a zero; negative values and
 * `end < start` are 400.
 */
export function searchWindow(request: { start?: number; end?: number }): { start: number; end: number } {
  const start = request.start ?? 0;
  const requestedEnd = request.end ?? 0;
  if (start < 0) throw new GAException('invalidRequest', `field 'start' must not be negative (got ${start})`);
  if (requestedEnd < 0) throw new GAException('invalidRequest', `field 'end' must not be negative (got ${requestedEnd})`);
  if (requestedEnd !== 0 && requestedEnd < start) {
    throw new GAException('invalidRequest', `field 'end' (${requestedEnd}) must not be less than field 'start' (${start})`);
  }
  return { start, end: requestedEnd === 0 ? Number.POSITIVE_INFINITY : requestedEnd };
}
