/** The `ga4gh` command line: `repo ...` registers files in a registry, `serve` serves a registry. */
import { Command } from 'commander';
import { allMigrations, areas, type CommandContext } from '../areas/index.js';
import type { CheckOptions, InventoryValue, Unresolved } from '../areas/area.js';
import { defaultServerConfig, SERVER_VERSION, type ServerConfig } from '../config.js';
import type { CompressionSettings } from '../content-coding.js';
import { formatCompressionOption, parseCompressionOption } from '../http/compression.js';
import { parseCorsOrigins } from '../http/cors.js';
import { interfaces } from '../interfaces/index.js';
import { copyRegistry } from '../registry/copy.js';
import type { Migration, MigrationContext } from '../registry/migrations.js';
import { createOrMigrateRegistry, migrateRegistry, withRegistry, type Registry } from '../registry/registry.js';
import { UserError } from '../user-error.js';
import { action, byteProgress, formatTable, integerAtLeast, portNumber, progressReporter, say } from './output.js';

// The CLI is a composition root: it hands every area's migrations to the registry.
const migrations = allMigrations();
const cli: CommandContext = { withRegistry: (location, fn) => withRegistry(location, migrations, fn), areas };

const appliedText = (applied: Migration[]) => `applied ${applied.map((m) => `${m.version} ${m.name}`).join(', ')}`;

/** Runs migrations with the progress of those that read the registered files on standard error, and their warnings after. */
async function withMigrationReport<T>(run: (context: MigrationContext) => Promise<T>): Promise<T> {
  const progress = byteProgress('reading');
  const warnings: string[] = [];
  try {
    return await run({ progress: progress.update, warn: (message) => warnings.push(message) });
  } finally {
    progress.done();
    for (const warning of warnings) say(`warning: ${warning}`);
  }
}

/** What every area's sets hold that nothing registered resolves yet; `check` is given by `repo check`. */
async function unresolvedIn(registry: Registry, check?: CheckOptions): Promise<Unresolved[]> {
  const found: Unresolved[] = [];
  for (const area of areas) if (area.unresolved) found.push(...(await area.unresolved(registry, check)));
  return found;
}

/** Names shown in one line at most: a cohort's thousands of samples are counted past the first few. */
const NAMES_SHOWN = 10;

/** One line for people: the set, what is unresolved (its first names), what resolves it. */
function unresolvedLine(u: Unresolved): string {
  const names = u.names.slice(0, NAMES_SHOWN).join(', ') + (u.names.length > NAMES_SHOWN ? `, ... (${u.names.length} in all)` : '');
  return `${u.set}: ${u.what}${u.names.length ? `: ${names}` : ''}; ${u.fix}`;
}

function repoCommands(program: Command): void {
  const repo = program.command('repo').description('create a registry and register files in it');

  repo
    .command('init')
    .description('create a registry (a SQLite file, or a postgres:// URL); on an existing one, say so and apply any pending migrations')
    .argument('<registry>')
    .action(
      action(async (location: string) => {
        // Idempotent, so that provisioning scripts may run it every time; it says what it found.
        const { registry, applied, existed } = await withMigrationReport((context) => createOrMigrateRegistry(location, migrations, context));
        await registry.close();
        if (!existed) say(`created registry ${location}`);
        else say(`registry ${location} already exists: ${applied.length ? appliedText(applied) : 'it is up to date, nothing changed'}`);
      }),
    );

  repo
    .command('migrate')
    .description('apply pending schema migrations to an existing registry')
    .argument('<registry>')
    .action(
      action(async (location: string) => {
        const { registry, applied } = await withMigrationReport((context) => migrateRegistry(location, migrations, context));
        await registry.close();
        say(applied.length ? appliedText(applied) : 'registry is up to date');
      }),
    );

  repo
    .command('copy')
    .description('copy a whole registry into a new or empty one: SQLite to PostgreSQL, back, or SQLite to SQLite')
    .argument('<source>', 'the registry to copy (left unchanged)')
    .argument('<target>', 'a SQLite path or postgres:// URL; created or migrated, and must hold no data')
    .action(
      action(async (source: string, target: string) => {
        const progress = progressReporter('copy');
        const copied = await copyRegistry(source, target, migrations, (table, rows) => progress.update(`copied into ${table}`, rows));
        progress.done();
        const total = copied.reduce((n, t) => n + t.rows, 0);
        say(`copied ${total} row(s) in ${copied.length} tables from ${source} to ${target}`);
      }),
    );

  repo
    .command('list')
    .description('show what is registered')
    .argument('<registry>')
    .option('--json', 'print JSON instead of tables')
    .action(
      action(async (location: string, opts: { json?: boolean }) => {
        const { sections, unresolved } = await cli.withRegistry(location, async (registry) => {
          const out = [];
          for (const area of areas) if (area.inventory) out.push(...(await area.inventory(registry)));
          return { sections: out, unresolved: await unresolvedIn(registry) };
        });
        if (opts.json) {
          // For scripts: lowercase snake_case keys, numbers as numbers, lists as lists, ids included.
          const key = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
          const json = Object.fromEntries(
            sections.map((s) => [key(s.title), s.rows.map((row) => Object.fromEntries(s.columns.map((c, i) => [key(c), row[i] ?? null])))]),
          );
          say(JSON.stringify({ ...json, unresolved }, null, 2));
          return;
        }
        const cell = (v: InventoryValue | undefined) => (v === null || v === undefined ? '' : Array.isArray(v) ? v.join(',') : String(v));
        say(
          [
            ...sections.map((s) => `${s.title} (${s.rows.length})\n${s.rows.length ? formatTable(s.columns, s.rows.map((r) => r.map(cell))) : '  (none)'}`),
            `Unresolved (${unresolved.length})\n${unresolved.length ? unresolved.map((u) => `  ${unresolvedLine(u)}`).join('\n') : '  (none)'}`,
          ].join('\n\n'),
        );
      }),
    );

  repo
    .command('check')
    .description('open every registered file and index; exit 1 if any problem is found')
    .argument('<registry>')
    .option('--deep', 'read every byte: inflate every block, check every VCF and BCF record, recompute every reference MD5')
    .action(
      action(async (location: string, opts: { deep?: boolean }) => {
        const progress = byteProgress('checking');
        const { problems, unresolved } = await cli.withRegistry(location, async (registry) => {
          const found: string[] = [];
          const options: CheckOptions = { deep: Boolean(opts.deep), progress: progress.update };
          for (const area of areas) if (area.check) found.push(...(await area.check(registry, options)));
          return { problems: found, unresolved: await unresolvedIn(registry, options) };
        }).finally(progress.done);
        // Not problems: what registering the missing pieces would add.
        for (const u of unresolved) say(`unresolved: ${unresolvedLine(u)}`);
        if (problems.length) {
          for (const p of problems) process.stderr.write(`problem: ${p}\n`);
          throw new UserError(`${problems.length} problem(s) found in ${location}`);
        }
        say(opts.deep ? `every byte of every registered file of ${location} was read and checked` : `all registered files of ${location} are readable`);
      }),
    );

  for (const area of areas) area.commands(repo, cli);
}

function compressionOf(text: string, threshold: number, defaults: ServerConfig): CompressionSettings {
  try {
    return { ...parseCompressionOption(text, defaults.compression), threshold };
  } catch (e) {
    throw new UserError((e as Error).message);
  }
}

function corsOf(serve: Command, opts: Record<string, any>): ServerConfig['cors'] {
  if (!opts.cors) {
    if (serve.getOptionValueSource('corsOrigin') === 'cli') throw new UserError('--cors-origin and --no-cors cannot be given together');
    return false;
  }
  try {
    return { origins: parseCorsOrigins(opts.corsOrigin) };
  } catch (e) {
    throw new UserError((e as Error).message);
  }
}

/** Deeper bodies than this could exhaust the stack of the recursive request reader, whatever the option says. */
const MAX_JSON_DEPTH = 512;

function serveCommand(program: Command): void {
  const defaults = defaultServerConfig();
  const serve = program
    .command('serve')
    .description('serve a registry over HTTP')
    .argument('<registry>')
    .option('--host <host>', 'address to listen on', defaults.host)
    .option('--port <port>', 'port to listen on (0: any free port)', portNumber, defaults.port)
    .option('--default-page-size <n>', 'records per page when a request gives no pageSize', integerAtLeast(1), defaults.paging.defaultPageSize)
    .option('--max-page-size <n>', 'largest pageSize honoured (larger ones are clamped)', integerAtLeast(1), defaults.paging.maxPageSize)
    .option('--page-byte-budget <bytes>', 'a page ends early once its records pass this size', integerAtLeast(1), defaults.paging.pageByteBudget)
    .option('--bases-page-size <n>', 'bases per page of ListReferenceBases', integerAtLeast(1), defaults.basesPageSize)
    .option('--registry-cache-ms <ms>', 'keep registry metadata in memory this long (0: read it on every request)', integerAtLeast(0), defaults.registryCacheMs)
    .option('--body-limit <bytes>', 'largest request body accepted', integerAtLeast(1), defaults.bodyLimit)
    .option('--naming <form>', 'answer every request in this naming form: camel or snake')
    .option('--cors-origin <origins>', 'origins whose pages may read the answers (CORS), comma-separated (https://app.example.org), or * for any', '*')
    .option('--no-cors', 'do not answer CORS preflights or send CORS headers')
    .option('--access-log', 'log one line per request to standard error')
    .option('--compression <codings>', 'codings offered for large replies, preferred first, each with an optional level (br:3,gzip:1), or off', formatCompressionOption(defaults.compression))
    .option('--compression-threshold <bytes>', 'replies smaller than this are not compressed', integerAtLeast(0), defaults.compression.threshold)
    .option('--page-workers <n>', 'worker threads that build pages of variants, reads and variant annotations (0: on the main thread, in slices)', integerAtLeast(0), defaults.pageWorkers)
    .option('--read-ahead-mb <n>', 'megabytes of memory each page worker may hold in next pages built ahead of their requests (0: none)', integerAtLeast(0), defaults.readAheadBytes / (1024 * 1024))
    .option('--max-json-depth <n>', 'deepest nesting of objects and arrays in a request body (at most 512)', integerAtLeast(1), defaults.limits.maxJsonDepth)
    .option('--max-header-bytes <bytes>', 'largest request line (URL) and headers together (431 beyond)', integerAtLeast(1024), defaults.limits.maxHeaderBytes)
    .option('--max-connections <n>', 'connections open at once; one more is answered 503 and closed', integerAtLeast(1), defaults.limits.maxConnections)
    .option('--max-streams <n>', 'large responses (pages of variants, reads and variant annotations, a variant with its calls) written at once; beyond, a request waits its turn', integerAtLeast(1), defaults.limits.maxStreams)
    .option('--stream-wait-ms <ms>', 'how long a request for a large response waits for a --max-streams slot, first come first served, before 503 with Retry-After (0: refused at once)', integerAtLeast(0), defaults.limits.streamWaitMs)
    .option('--headers-timeout-ms <ms>', 'time a client has to send its request headers (408 after)', integerAtLeast(100), defaults.limits.headersTimeoutMs)
    .option('--request-timeout-ms <ms>', 'time a client has to send a whole request (408 after)', integerAtLeast(100), defaults.limits.requestTimeoutMs)
    .option('--keep-alive-timeout-ms <ms>', 'how long an idle keep-alive connection is kept', integerAtLeast(1), defaults.limits.keepAliveTimeoutMs)
    .option('--idle-timeout-ms <ms>', 'close a connection with no bytes either way for this long (0: never)', integerAtLeast(0), defaults.limits.idleTimeoutMs)
    .option('--rate-limit <n>', 'requests a second from one client address, averaged (0: no limit)', integerAtLeast(0), defaults.limits.ratePerSecond)
    .option('--rate-burst <n>', 'requests one address may send at once above --rate-limit', integerAtLeast(1), defaults.limits.rateBurst)
    .option('--access-policy <file>', 'YAML or JSON file saying who may see which dataset at which level; read again on SIGHUP and when it changes (without it, every dataset is open)');
  for (const area of areas) area.serveOptions?.(serve);
  for (const iface of interfaces) iface.serveOptions?.(serve);
  serve.action(
      action(async (location: string, opts: Record<string, any>) => {
        if (opts.naming !== undefined && opts.naming !== 'camel' && opts.naming !== 'snake') {
          throw new UserError(`--naming must be camel or snake, not ${opts.naming}`);
        }
        if (opts.maxJsonDepth > MAX_JSON_DEPTH) throw new UserError(`--max-json-depth must be at most ${MAX_JSON_DEPTH}`);
        if (opts.headersTimeoutMs > opts.requestTimeoutMs) throw new UserError('--headers-timeout-ms must not be more than --request-timeout-ms');
        const config: ServerConfig = {
          ...defaults,
          host: opts.host,
          port: opts.port,
          paging: { defaultPageSize: opts.defaultPageSize, maxPageSize: opts.maxPageSize, pageByteBudget: opts.pageByteBudget },
          basesPageSize: opts.basesPageSize,
          registryCacheMs: opts.registryCacheMs,
          bodyLimit: opts.bodyLimit,
          cors: corsOf(serve, opts),
          forceForm: opts.naming,
          accessLog: Boolean(opts.accessLog),
          compression: compressionOf(opts.compression, opts.compressionThreshold, defaults),
          pageWorkers: opts.pageWorkers,
          readAheadBytes: opts.readAheadMb * 1024 * 1024,
          limits: {
            maxJsonDepth: opts.maxJsonDepth,
            maxHeaderBytes: opts.maxHeaderBytes,
            maxConnections: opts.maxConnections,
            maxStreams: opts.maxStreams,
            streamWaitMs: opts.streamWaitMs,
            headersTimeoutMs: opts.headersTimeoutMs,
            requestTimeoutMs: opts.requestTimeoutMs,
            keepAliveTimeoutMs: opts.keepAliveTimeoutMs,
            idleTimeoutMs: opts.idleTimeoutMs,
            ratePerSecond: opts.rateLimit,
            rateBurst: opts.rateBurst,
          },
          options: opts,
        };
        let server;
        try {
          // The server's modules (HTTP, web page, page workers, every area's routes) only for `serve`.
          const { startServer } = await import('../app.js');
          server = await startServer(location, config);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'EADDRINUSE') throw new UserError(`${config.host}:${config.port} is already in use; choose another --port`);
          if (code === 'EADDRNOTAVAIL' || code === 'EACCES') throw new UserError(`cannot listen on ${config.host}:${config.port} (${code})`);
          throw e;
        }
        say(`serving ${location} at ${server.url}`);
        say(`web page: ${server.url}/  API docs: ${server.url}/docs  OpenAPI: ${server.url}/openapi.json`);
        process.stderr.write(`${new Date().toISOString()} started: serving ${location} at ${server.url}\n`);
        process.stderr.write(`${new Date().toISOString()} ${server.access.summary()}\n`);
        // Always handled, so that a reload (systemctl reload) never stops a server that has no policy to read.
        process.on('SIGHUP', () => void server.access.reload('SIGHUP'));
        const stop = async (signal: string) => {
          process.stderr.write(`${new Date().toISOString()} stopping (${signal}): no new connections\n`);
          await server.close();
          process.stderr.write(`${new Date().toISOString()} stopped serving ${location}\n`);
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }),
    );
}

function accessCommands(program: Command): void {
  const access = program.command('access').description('access control: API keys of the access policy (see ga4gh serve --access-policy)');
  access
    .command('add-key')
    .description('make a new API key: print it once, with the entry of the policy\'s keys: that grants it')
    .argument('<name>', 'the key\'s name, as access logs give it')
    .option('--dataset <dataset=level>', 'a dataset and the level the key gives for it (none, boolean, count, record, data); repeatable', (value: string, previous: string[]) => [...previous, value], [])
    .option('--policy <file>', 'add the entry to this policy file (checked before and after; replaced in one rename, so a server watching it reads it whole)')
    .action(
      action(async (name: string, opts: { dataset: string[]; policy?: string }) => {
        const { addKey } = await import('../access/add-key.js');
        for (const line of await addKey(name, opts.dataset, opts.policy)) say(line);
        process.stderr.write('the key is shown only now: the policy keeps its hash, from which it cannot be recovered\n');
      }),
    );
}

export function buildProgram(): Command {
  const program = new Command('ga4gh')
    .description('register genomic files and serve them over the GA4GH 0.6.0a10 HTTP/JSON interface')
    .version(SERVER_VERSION)
    .showHelpAfterError(false)
    .configureOutput({ outputError: (text, write) => write(text.split('\n')[0] + '\n') });
  repoCommands(program);
  serveCommand(program);
  accessCommands(program);
  return program;
}
