/**
 * What a caller may do with a dataset, in increasing order: each level allows what the ones below it
 * allow. `none`: the dataset does not exist for the caller. `boolean` and `count`: Beacon answers of
 * that granularity only. `record`: searches and gets. `data`: htsget tickets and their bytes, and the
 * bases of private reference sets.
 */
export const LEVELS = ['none', 'boolean', 'count', 'record', 'data'] as const;

export type Level = (typeof LEVELS)[number];

/** The level of every dataset when the server runs without an access policy. */
export const OPEN_LEVEL: Level = 'data';

export const isLevel = (text: unknown): text is Level => typeof text === 'string' && (LEVELS as readonly string[]).includes(text);

const rank = (level: Level) => LEVELS.indexOf(level);

/** True when `level` allows at least what `needed` allows. */
export const allows = (level: Level, needed: Level) => rank(level) >= rank(needed);

/** The higher of the levels given (`none` for none). */
export const highest = (levels: Iterable<Level>): Level => {
  let best: Level = 'none';
  for (const level of levels) if (rank(level) > rank(best)) best = level;
  return best;
};

/** The lower of two levels. */
export const lower = (a: Level, b: Level): Level => (rank(a) <= rank(b) ? a : b);
