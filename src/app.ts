/** Assembles a server from a registry and settings: every area's routes on one HTTP listener. */
import { allMigrations, areas, type AppContext } from './areas/index.js';
import type { ServerConfig } from './config.js';
import { startHttpServer, type RunningServer } from './http/server.js';
import { webRoutes } from './web/index.js';
import { openRegistry } from './registry/registry.js';

export async function startServer(location: string, config: ServerConfig): Promise<RunningServer> {
  const registry = await openRegistry(location, allMigrations());
  const cleanups: Array<() => void | Promise<void>> = [];
  const app: AppContext = { registry, registryLocation: location, config, areaNames: areas.map((a) => a.name), onClose: (fn) => cleanups.push(fn) };
  try {
    const areaRoutes = areas.map((area) => ({ area: area.name, routes: area.routes(app) }));
    const routes = [...areaRoutes.flatMap((a) => a.routes), ...webRoutes(areaRoutes)];
    const server = await startHttpServer(routes, config);
    return {
      ...server,
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
