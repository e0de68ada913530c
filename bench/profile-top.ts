/**
 * Reads a V8 .cpuprofile (from `node --cpu-prof`, e.g. `npm run bench -- --profile`) and prints where
 * the time went: self time per function, inclusive time per function, and self time per file or
 * package.
 *
 *   node --import tsx bench/profile-top.ts bench/results/profiles/P1.cpuprofile [--top 25]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  ms: number;
  share: number;
}

export interface Summary {
  /** Which thread of the process this profile is of (--cpu-prof writes one file per thread). */
  thread: string;
  totalMs: number;
  /** Time the server waited for work: the event loop idle. */
  idleMs: number;
  gcMs: number;
  self: Row[];
  inclusive: Row[];
  files: Row[];
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** Short place of a function: package name for node_modules, path from the repository otherwise. */
function placeOf(url: string): string {
  if (!url) return '';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = file.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const src = file.search(/\/(src|bench|test)\//);
  return src !== -1 ? file.slice(src + 1) : file.startsWith('node:') ? file : path.basename(file);
}

export function summarize(profile: Profile, top = 20): Summary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const keyOf = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    if (SPECIAL.has(functionName)) return functionName;
    const place = placeOf(url);
    return `${functionName || '(anonymous)'}${place ? ` ${place}:${lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const files = new Map<string, number>();
  let totalMs = 0;
  // A sample's time is the interval until the next sample (how Chrome DevTools attributes it).
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (ms <= 0) continue;
    totalMs += ms;
    const node = byId.get(profile.samples[i])!;
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + ms);
    const fn = node.callFrame.functionName;
    const file = SPECIAL.has(fn) ? fn : placeOf(node.callFrame.url) || '(native)';
    files.set(file, (files.get(file) ?? 0) + ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const k = keyOf(byId.get(id)!);
      if (seen.has(k) || SPECIAL.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + ms);
    }
  }
  const busy = totalMs - (self.get('(idle)') ?? 0);
  const rows = (m: Map<string, number>, skipIdle: boolean) =>
    [...m]
      .filter(([k]) => !(skipIdle && k === '(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms, share: busy > 0 ? ms / busy : 0 }));
  const urls = new Set(profile.nodes.map((n) => n.callFrame.url));
  const thread = urls.has('node:_http_server')
    ? 'main thread (HTTP)'
    : urls.has('node:internal/modules/esm/worker')
      ? 'module loader thread (tsx hooks)'
      : 'worker thread';
  return {
    thread,
    totalMs,
    idleMs: self.get('(idle)') ?? 0,
    gcMs: self.get('(garbage collector)') ?? 0,
    self: rows(self, true),
    inclusive: rows(inclusive, true),
    files: rows(files, true),
  };
}

export function formatSummary(s: Summary, title: string): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const table = (heading: string, rows: Row[]) =>
    [`  ${heading}`, ...rows.map((r) => `    ${r.ms.toFixed(0).padStart(7)} ms ${pct(r.share)}  ${r.name}`)].join('\n');
  const busy = s.totalMs - s.idleMs;
  return [
    `${title}, ${s.thread}: ${(s.totalMs / 1000).toFixed(1)} s profiled, ${(busy / 1000).toFixed(1)} s busy ` +
      `(${pct(busy / s.totalMs).trim()}), GC ${(s.gcMs / 1000).toFixed(2)} s; shares below are of busy time`,
    table('self time by function', s.self),
    table('inclusive time by function', s.inclusive),
    table('self time by file or package', s.files),
  ].join('\n');
}

export function summarizeFile(file: string, top = 20): Summary {
  return summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile, top);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt === -1 ? 20 : Number(args.splice(topAt, 2)[1]);
  if (!args.length) {
    console.error('usage: node --import tsx bench/profile-top.ts FILE.cpuprofile... [--top N]');
    process.exit(1);
  }
  for (const file of args) console.log(formatSummary(summarizeFile(file, top), path.basename(file)) + '\n');
}
