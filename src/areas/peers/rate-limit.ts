/**
 * Announcements per remote address: a token bucket each, refilled at `perMinute` tokens a minute and
 * holding at most that many. Kept in memory on purpose (each replica limits what it receives); the
 * table is bounded by dropping buckets that have refilled completely, which hold no information.
 */
export class AnnounceRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly maxTracked = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token for this address; false when it has none left. */
  take(address: string): boolean {
    const now = this.now();
    const bucket = this.buckets.get(address);
    const tokens = bucket ? Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000) : this.perMinute;
    if (tokens < 1) {
      this.buckets.set(address, { tokens, at: now });
      return false;
    }
    if (!bucket && this.buckets.size >= this.maxTracked) this.sweep(now);
    this.buckets.set(address, { tokens: tokens - 1, at: now });
    return true;
  }

  private sweep(now: number): void {
    for (const [address, b] of this.buckets) {
      if (b.tokens + ((now - b.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(address);
    }
    // Still full of active senders: forget the oldest, which at worst lets one of them send a little more.
    while (this.buckets.size >= this.maxTracked) this.buckets.delete(this.buckets.keys().next().value!);
  }
}
