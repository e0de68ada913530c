/**
 * Runs the ga4gh command lines recorded in FILE one after the other in this one process, each as
 * bin/ga4gh runs one, and stops at the first that fails:
 *
 *   node --import tsx test/run-commands.ts FILE
 *
 * FILE holds, for each command line, its number of arguments and then its arguments, each ended by a
 * NUL byte (what `printf '%s\0' "$#" "$@"` writes in bash). test/readme.test.ts records the demo's
 * registration so, and this saves a Node start-up per command.
 */
import fs from 'node:fs';
import { buildProgram } from '../src/cli/main.js';

const fields = fs.readFileSync(process.argv[2], 'utf8').split('\0');
for (let at = 0; at < fields.length - 1; ) {
  const count = Number(fields[at]);
  const args = fields.slice(at + 1, at + 1 + count);
  at += 1 + count;
  await buildProgram().exitOverride().parseAsync(args, { from: 'user' });
  if (process.exitCode) {
    process.stderr.write(`failed: ga4gh ${args.join(' ')}\n`);
    break;
  }
}
