/**
 * The project's compiled modules (binding.gyp; `npm ci` builds them into build/Release). Each has a
 * TypeScript twin that gives the same answers, so a module that is missing is never an error.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * The module `name`, unless it was not built (no C compiler at install), was built from an older
 * checkout and not rebuilt (its interfaceVersion is not `interfaceVersion`; `npm ci` rebuilds it), or
 * the environment variable `switchOff` is `0`: then undefined, and its caller uses its twin.
 */
export function nativeModule<T extends { interfaceVersion: number }>(name: string, interfaceVersion: number, switchOff: string): T | undefined {
  if (process.env[switchOff] === '0') return undefined;
  try {
    const native = load(`../build/Release/${name}.node`) as T;
    return native.interfaceVersion === interfaceVersion ? native : undefined;
  } catch {
    return undefined;
  }
}
