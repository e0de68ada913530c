/**
 * Mechanisms a server runs without, for the bench's on/off comparison of each (`npm run bench --
 * --audit`): `GA4GH_WITHOUT` names them, separated by commas. Read here only, once per thread; the
 * page workers see the main thread's environment.
 */

export const MECHANISMS = ['read-ahead', 'sliced-path', 'chunk-pool', 'idle-policy'] as const;
export type Mechanism = (typeof MECHANISMS)[number];

function named(text: string | undefined): Set<Mechanism> {
  const names = (text ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(MECHANISMS as readonly string[]).includes(name)) throw new Error(`GA4GH_WITHOUT names '${name}'; it takes ${MECHANISMS.join(', ')}`);
  }
  return new Set(names as Mechanism[]);
}

const off = named(process.env.GA4GH_WITHOUT);

/** Whether the server runs without this mechanism. */
export const without = (mechanism: Mechanism): boolean => off.has(mechanism);
