/** Assembles a server from a registry and settings: every area's and interface's routes on one HTTP listener. */
import { AccessPolicyHolder } from './access/holder.js';
import { listDatasets } from './areas/datasets/store.js';
import { allMigrations, areas, routesOfAreas, type AppContext } from './areas/index.js';
import type { ServerConfig } from './config.js';
import { streamSlotsOf, type StreamSlots } from './http/limits.js';
import { routesOfInterfaces } from './interfaces/index.js';
import { startHttpServer, type RunningServer } from './http/server.js';
import { webRoutes } from './web/index.js';
import { openRegistry, type Registry } from './registry/registry.js';
import { pageWorkerPool } from './workers/pool.js';

/** A running server and the access policy it holds (read again on reload()). */
export interface AssembledServer extends RunningServer {
  access: AccessPolicyHolder;
}

/** The names of every dataset of the registry: an access policy may name no other. */
async function datasetNamesOf(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  const PAGE = 1000;
  for (let page = await listDatasets(registry, undefined, PAGE); page.length; page = await listDatasets(registry, page[page.length - 1].name, PAGE)) {
    for (const row of page) names.add(row.name);
  }
  return names;
}

const logLine = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

/** The longest a page built ahead of its request is kept (and never longer than the registry cache time). */
const READ_AHEAD_HOLD_MS = 10_000;

/**
 * `streams`: the slots of large responses, shared by the HTTP layer, which takes them, and the page
 * workers, which build no page ahead while all are taken (given by a test that watches their line).
 */
export async function startServer(
  location: string,
  config: ServerConfig,
  streams: StreamSlots = streamSlotsOf(config.limits),
): Promise<AssembledServer> {
  const registry = await openRegistry(location, allMigrations());
  const cleanups: Array<() => void | Promise<void>> = [];
  const readAhead = { maxBytes: config.readAheadBytes, holdMs: Math.min(READ_AHEAD_HOLD_MS, config.registryCacheMs) };
  const pageWorkers =
    config.pageWorkers > 0
      ? pageWorkerPool(
          config.pageWorkers,
          { registryLocation: location, paging: config.paging, registryCacheMs: config.registryCacheMs, readAhead, compression: config.compression },
          streams,
        )
      : undefined;
  if (pageWorkers) cleanups.push(() => pageWorkers.close());
  try {
    // Read and checked before any route exists: a policy that fails its checks stops the start.
    const access = await AccessPolicyHolder.start({
      file: config.options.accessPolicy as string | undefined,
      knownDatasets: () => datasetNamesOf(registry),
      log: logLine,
    });
    cleanups.push(() => access.close());
    const app: AppContext = {
      registry,
      config,
      pageWorkers,
      access,
      areaNames: areas.map((a) => a.name),
      onClose: (fn) => cleanups.push(fn),
    };
    const areaRoutes = await routesOfAreas(app);
    // The web page and API docs describe the 0.6.0a10 areas; the other interfaces have specifications of their own.
    const routes = [...areaRoutes.flatMap((a) => a.routes), ...(await routesOfInterfaces(app)), ...webRoutes(areaRoutes)];
    const server = await startHttpServer(routes, config, streams, access);
    return {
      ...server,
      access,
      async close() {
        await server.close();
        for (const fn of cleanups.reverse()) await fn();
        await registry.close();
      },
    };
  } catch (e) {
    for (const fn of cleanups.reverse()) await fn();
    await registry.close();
    throw e;
  }
}
