/**
 * Announcements per remote address: a token bucket each, refilled at `perMinute` tokens a minute and
 * holding at most that many. Kept in memory on purpose (each replica limits what it receives).
 */
import { TokenBuckets } from '../../http/limits.js';

export class AnnounceRateLimiter extends TokenBuckets {
  constructor(perMinute: number, maxTracked = 10_000, now: () => number = Date.now) {
    super(perMinute, 60_000, perMinute, maxTracked, now);
  }
}
