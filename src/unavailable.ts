/**
 * Something the server depends on is down for now (the registry's database): not the client's fault
 * and not a bug. The HTTP layer answers it with 503 and Retry-After; the CLI prints its message.
 */
export class TemporarilyUnavailable extends Error {
  constructor(
    message: string,
    /** Seconds after which trying again may succeed. */
    readonly retryAfterSeconds = 2,
  ) {
    super(message);
    this.name = 'TemporarilyUnavailable';
  }
}
