/**
 * The caller of the request being answered and the policy snapshot it was resolved under, carried
 * with the request's asynchronous work (AsyncLocalStorage) from the HTTP layer, which resolves the
 * caller once, to the places that turn a dataset-scoped id into its dataset (protocol/ids.ts) and the
 * services that list datasets. Code that runs outside a request (the command line, page builders
 * working for a request already checked) sees every dataset at `data`, as a server without a policy.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Caller } from './callers.js';
import { accessLevel } from './decision.js';
import type { AccessSnapshot } from './holder.js';
import { allows, OPEN_LEVEL, type Level } from './levels.js';

export interface RequestAccess {
  readonly snapshot: AccessSnapshot;
  readonly caller: Caller;
  /** The datasets the request reached, for its access log line. */
  readonly datasets: Set<string>;
}

const current = new AsyncLocalStorage<RequestAccess>();

/** Runs `answer` as the work of a request of `caller` under `snapshot`. */
export function runWithAccess<T>(access: RequestAccess, answer: () => T): T {
  return current.run(access, answer);
}

/** The access of the request being answered, if any. */
export const requestAccess = (): RequestAccess | undefined => current.getStore();

/** The level the caller of the request being answered has for `dataset`. */
export function levelInRequest(dataset: string): Level {
  const access = current.getStore();
  return access ? accessLevel(access.snapshot, dataset, access.caller) : OPEN_LEVEL;
}

/**
 * Whether the caller of the request being answered has at least `needed` for `dataset`; when they
 * have, the request's access log line names the dataset. (A hidden dataset is not named: the line
 * then says only what its caller asked for.)
 */
export function mayHave(dataset: string, needed: Level): boolean {
  const allowed = allows(levelInRequest(dataset), needed);
  if (allowed) current.getStore()?.datasets.add(dataset);
  return allowed;
}

/**
 * The rows of a keyset page (pageSize + 1 of them, the one more saying that more follow) whose
 * datasets the request's caller may read records of: listed from `after` in batches, past the rows of
 * other datasets, until the page is full or the list ends. For searches that span every dataset.
 */
export async function readableRows<Row, Position>(
  listFrom: (after: Position | undefined, limit: number) => Promise<Row[]>,
  after: Position | undefined,
  pageSize: number,
  datasetOf: (row: Row) => string,
  positionOf: (row: Row) => Position,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (let from = after; rows.length <= pageSize; ) {
    const batch = await listFrom(from, pageSize + 1);
    rows.push(...batch.filter((row) => mayHave(datasetOf(row), 'record')));
    if (batch.length <= pageSize) break;
    from = positionOf(batch[batch.length - 1]);
  }
  return rows.slice(0, pageSize + 1);
}
