/**
 * The access decision (DESIGN.md, "Several interfaces over one registry"): one function of a dataset
 * and a caller that says how much of the dataset the caller may learn. Every interface asks it once
 * per dataset per request, before any read that depends on that dataset, and none decides on its own.
 *
 * Today every caller is anonymous and the answer is the dataset's Beacon granularity, as the operator
 * set it (`repo add-dataset --beacon-granularity`, `repo set-beacon-granularity`). Verified callers and
 * policies add kinds of Caller and cases here; the interfaces keep calling the one function.
 */
import type { BeaconGranularity } from '../areas/datasets/store.js';

/** How much of a dataset a caller may learn: nothing (it does not exist for them), or a Beacon granularity. */
export type AccessLevel = 'none' | BeaconGranularity;

/** Least first: a level grants every level before it. */
const ORDER: readonly AccessLevel[] = ['none', 'boolean', 'count', 'record'];

/** Who asks. */
export type Caller = { kind: 'anonymous' };

export const ANONYMOUS: Caller = { kind: 'anonymous' };

/** What the decision needs to know of a dataset. */
export interface DatasetForAccess {
  name: string;
  beaconGranularity: BeaconGranularity;
}

/** The level of `dataset` for `caller`. */
export function accessLevel(dataset: DatasetForAccess, caller: Caller): AccessLevel {
  switch (caller.kind) {
    case 'anonymous':
      return dataset.beaconGranularity;
  }
}

/** The lower of two levels: what is granted when `asked` is asked of a dataset that allows `allowed`. */
export function lowerLevel<T extends AccessLevel>(asked: T, allowed: AccessLevel): T | AccessLevel {
  return ORDER.indexOf(asked) <= ORDER.indexOf(allowed) ? asked : allowed;
}

/** Whether `level` grants at least `wanted`. */
export const grants = (level: AccessLevel, wanted: AccessLevel): boolean => ORDER.indexOf(level) >= ORDER.indexOf(wanted);
