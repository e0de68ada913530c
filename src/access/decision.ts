/**
 * The access decision (DESIGN.md, "Several interfaces over one registry"): one function of a dataset
 * and a caller that says how much of the dataset the caller may learn. Every interface asks it once
 * per dataset per request, before any read that depends on that dataset, and none decides on its own
 * (the HTTP layer resolves the caller; request-access.ts carries it and the policy to the interfaces).
 *
 * The level is the one the access policy gives the caller (policy.ts, levelOf; `data` without a
 * policy). For Beacon it is also capped by the dataset's Beacon granularity, as the operator set it
 * (`repo add-dataset --beacon-granularity`, `repo set-beacon-granularity`): a Beacon answer is never
 * finer than either.
 */
import type { Caller } from './callers.js';
import type { AccessSnapshot } from './holder.js';
import { allows, lower, type Level } from './levels.js';
import { levelOf } from './policy.js';

export { ANONYMOUS, type Caller } from './callers.js';

/** What the decision needs to know of a dataset. */
export interface DatasetForAccess {
  name: string;
  /** For a Beacon answer: the dataset's Beacon granularity, which caps the level. */
  beaconGranularity?: Level;
}

/** The level of `dataset` for `caller` under the policy of `snapshot`. */
export function accessLevel(snapshot: Pick<AccessSnapshot, 'policy'>, dataset: DatasetForAccess, caller: Caller): Level {
  const level = levelOf(snapshot.policy, caller, dataset.name);
  return dataset.beaconGranularity === undefined ? level : lower(level, dataset.beaconGranularity);
}

/** The lower of two levels: what is granted when `asked` is asked of a dataset that allows `allowed`. */
export const lowerLevel = lower;

/** Whether `level` grants at least `wanted`. */
export const grants = allows;
