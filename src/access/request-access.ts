/**
 * The caller of the request being answered and the policy snapshot it was resolved under, carried
 * with the request's asynchronous work (AsyncLocalStorage) from the HTTP layer, which resolves the
 * caller once, to the places that turn a dataset-scoped id into its dataset (protocol/ids.ts) and the
 * services that list datasets. Code that runs outside a request (the command line, page builders
 * working for a request already checked) sees every dataset at `data`, as a server without a policy.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ANONYMOUS, type Caller } from './callers.js';
import { accessLevel, type DatasetForAccess } from './decision.js';
import type { AccessSnapshot } from './holder.js';
import { allows, type Level } from './levels.js';

export interface RequestAccess {
  readonly snapshot: AccessSnapshot;
  readonly caller: Caller;
  /** The datasets the request reached, for its access log line. */
  readonly datasets: Set<string>;
}

const current = new AsyncLocalStorage<RequestAccess>();

/**
 * The dataset a dataset-scoped id of a dataset hidden from the caller resolves to: a name no dataset
 * can have (`repo add-dataset` refuses names that are only whitespace). The services then look it up
 * and find nothing, as they do for an id of nothing registered, so both answer the same 404 in the
 * same time.
 */
export const NO_DATASET = ' ';

/** Outside a request: as without a policy. */
const NO_POLICY = { policy: null };

/** Runs `answer` as the work of a request of `caller` under `snapshot`. */
export function runWithAccess<T>(access: RequestAccess, answer: () => T): T {
  return current.run(access, answer);
}

/**
 * The level the caller of the request being answered has for `dataset` (a name, or a name with its
 * Beacon granularity). A dataset that exists for the caller is named by the request's access log line.
 */
export function levelInRequest(dataset: string | DatasetForAccess): Level {
  const access = current.getStore();
  const asked = typeof dataset === 'string' ? { name: dataset } : dataset;
  if (asked.name === NO_DATASET) return 'none';
  const level = accessLevel(access?.snapshot ?? NO_POLICY, asked, access?.caller ?? ANONYMOUS);
  if (level !== 'none') access?.datasets.add(asked.name);
  return level;
}

/** Whether the caller of the request being answered has at least `needed` for `dataset`. */
export const mayHave = (dataset: string | DatasetForAccess, needed: Level): boolean => allows(levelInRequest(dataset), needed);

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
