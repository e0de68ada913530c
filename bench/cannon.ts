/**
 * P3's load generator, in a process of its own: one autocannon run, its result as one line of JSON.
 * autocannon sets up hdr-histogram's WebAssembly when it is loaded, and from then on the process that
 * loaded it runs a full collection of its heap every few tens of milliseconds while it reads large
 * bodies (measured: ~95 in four passes of the READS region, where a process without it ran none),
 * which tripled the CPU the bench's own client spent per read. Kept out of the bench's process, it
 * taxes no other part's client.
 *
 * Usage: node --import tsx bench/cannon.ts OPTIONS_JSON (autocannon's options)
 */
import autocannon from 'autocannon';

const result = await autocannon(JSON.parse(process.argv[2]) as autocannon.Options);
process.stdout.write(JSON.stringify(result) + '\n');
