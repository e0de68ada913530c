/**
 * GAException and the stable error codes of this server. Every failure a client can cause maps to one
 * of these kinds; the HTTP layer writes `{errorCode, message}` with the kind's status.
 */
export const ErrorKind = {
  invalidRequest: { code: 1, status: 400 },
  unknownField: { code: 2, status: 400 },
  malformedJson: { code: 3, status: 400 },
  invalidPageToken: { code: 4, status: 400 },
  missingField: { code: 5, status: 400 },
  duplicateField: { code: 6, status: 400 },
  /** Credentials that do not verify (an expired token, an unknown key): never taken for anonymous. */
  invalidCredentials: { code: 7, status: 401 },
  notFound: { code: 10, status: 404 },
  noSuchPath: { code: 11, status: 404 },
  methodNotAllowed: { code: 12, status: 405 },
  bodyTooLarge: { code: 13, status: 413 },
  unsupportedMediaType: { code: 14, status: 415 },
  rangeNotSatisfiable: { code: 15, status: 416 },
  tooManyRequests: { code: 16, status: 429 },
  headersTooLarge: { code: 17, status: 431 },
  requestTimeout: { code: 18, status: 408 },
  forbidden: { code: 19, status: 403 },
  internal: { code: 20, status: 500 },
  notImplemented: { code: 21, status: 501 },
  unavailable: { code: 22, status: 503 },
} as const;

export type ErrorKindName = keyof typeof ErrorKind;

export class GAException extends Error {
  readonly kind: ErrorKindName;
  readonly status: number;
  readonly code: number;
  /** Extra top-level fields some replies carry beside the error (AnnouncePeerResponse's success). */
  readonly extra?: Readonly<Record<string, boolean | string | number>>;
  /** Seconds after which trying again may succeed (`Retry-After`), for 429 and 503. */
  retryAfterSeconds?: number;
  /**
   * What went wrong inside the server (a file it could not read, and why), for its log only: the reply
   * names the resource, never a path. Logged once, by the HTTP layer, when a client is answered with
   * this error, so a failure no client saw (a page built ahead of its request) leaves no line.
   */
  logDetail?: string;

  constructor(kind: ErrorKindName, message: string, extra?: Record<string, boolean | string | number>) {
    super(message);
    this.name = 'GAException';
    this.kind = kind;
    this.status = ErrorKind[kind].status;
    this.code = ErrorKind[kind].code;
    this.extra = extra;
  }

  /** An error that passes: the reply says when to try again. */
  static retryLater(kind: ErrorKindName, message: string, seconds: number): GAException {
    const error = new GAException(kind, message);
    error.retryAfterSeconds = seconds;
    return error;
  }

  /** A failure of the server's own files: answered with `message`, logged with `logDetail`. */
  static serverFault(kind: ErrorKindName, message: string, logDetail: string): GAException {
    const error = new GAException(kind, message);
    error.logDetail = logDetail;
    return error;
  }

  /**
   * The data files of a registered resource could not be read: the server's fault (503), the reply
   * naming the resource (`the VCF files of variant set 'x' cannot be read right now`), the cause for
   * the log. A GAException met while reading passes as it is.
   */
  static unreadable(files: string, resource: string, error: unknown): GAException {
    if (error instanceof GAException) return error;
    return GAException.serverFault('unavailable', `${files} of ${resource} cannot be read right now`, `reading ${resource}: ${(error as Error).message}`);
  }

  /** The same error with extra top-level fields in its reply. */
  with(extra: Record<string, boolean | string | number>): GAException {
    const error = new GAException(this.kind, this.message, { ...this.extra, ...extra });
    error.retryAfterSeconds = this.retryAfterSeconds;
    error.logDetail = this.logDetail;
    return error;
  }
}

export const invalid = (message: string) => new GAException('invalidRequest', message);
export const notFound = (what: string, id: string) =>
  new GAException('notFound', `no ${what} with id '${id}'`);
