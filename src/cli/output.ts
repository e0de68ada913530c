/** How CLI commands report: one line per problem, non-zero exit, never a stack trace for user errors. */
import { InvalidArgumentError } from 'commander';
import { UserError } from '../user-error.js';

export function reportFailure(error: unknown): void {
  if (error instanceof UserError) {
    process.stderr.write(`ga4gh: ${error.message}\n`);
    process.exitCode = 1;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`ga4gh: unexpected error: ${message.split('\n')[0]}\n`);
    if (process.env.GA4GH_DEBUG) console.error(error);
    process.exitCode = 2;
  }
}

/** Wraps a command's action so that any failure becomes one line on standard error. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (e) {
      reportFailure(e);
    }
  };
}

export function say(line: string): void {
  process.stdout.write(line + '\n');
}

export function formatTable(columns: string[], rows: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Parses `--source-accessions A,B` style lists. */
export const commaList = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Parses an integer option value, refusing anything below `min` (commander reports it in one line). */
export function integerAtLeast(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
}

/** Parses a TCP port option: 0 (any free port) to 65535. */
export function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return n;
}

/**
 * Milliseconds between progress lines when standard error is not a terminal (a log file): 10,000 by
 * default, or GA4GH_PROGRESS_INTERVAL (0 prints every update).
 */
function progressInterval(): number {
  const ms = Number(process.env.GA4GH_PROGRESS_INTERVAL ?? 10_000);
  return Number.isFinite(ms) && ms >= 0 ? ms : 10_000;
}

/**
 * Progress on standard error: a line rewritten in place on a terminal; otherwise a plain line at most
 * every 10 seconds, so logs of long loads show life without filling up.
 */
export function progressLine(): { show(text: string): void; done(): void } {
  const tty = process.stderr.isTTY;
  const interval = progressInterval();
  let lastLine = Date.now();
  let shown = false;
  return {
    show(text) {
      const now = Date.now();
      if (tty) {
        process.stderr.write(`\r${text}\x1b[K`);
        shown = true;
      } else if (now - lastLine >= interval) {
        process.stderr.write(text + '\n');
        lastLine = now;
      }
    },
    done() {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

/** Progress counted in rows: `label: 1,200,000 rows read`. */
export function progressReporter(label: string): { update(phase: string, rows: number): void; done(): void } {
  const line = progressLine();
  return {
    update: (phase, rows) => line.show(`${label}: ${rows.toLocaleString('en-US')} rows ${phase}`),
    done: () => line.done(),
  };
}

const megabytes = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Progress counted in bytes of a file: `label FILE: 12.0 of 300.0 MB (4%)`. */
export function byteProgress(label: string): { update(what: string, bytesRead: number, size: number): void; done(): void } {
  const line = progressLine();
  return {
    update: (what, read, size) =>
      line.show(`${label} ${what}: ${megabytes(read)} of ${megabytes(size)} MB (${size ? Math.floor((read / size) * 100) : 100}%)`),
    done: () => line.done(),
  };
}
