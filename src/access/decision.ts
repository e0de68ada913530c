/**
 * The one decision every interface asks: the level a caller has for a dataset under the policy in
 * force. Routes never read the policy themselves.
 */
import type { Caller } from './callers.js';
import type { AccessSnapshot } from './holder.js';
import type { Level } from './levels.js';
import { levelOf } from './policy.js';

/** The level `caller` has for the dataset named `dataset` under `snapshot`'s policy (`data` without one). */
export function accessLevel(snapshot: Pick<AccessSnapshot, 'policy'>, dataset: string, caller: Caller): Level {
  return levelOf(snapshot.policy, caller, dataset);
}
