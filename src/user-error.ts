/**
 * A problem with what the user asked for (a missing file, a duplicate name, an unknown dataset): the
 * CLI prints its message as one line and exits non-zero, without a stack trace.
 */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}
