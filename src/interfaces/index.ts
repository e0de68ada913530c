/**
 * The public interfaces served beside the GA4GH 0.6.0a10 areas, over the same registry and files
 * (DESIGN.md, "Several interfaces over one registry"): each a folder of its own with its routes,
 * message shapes and error form, over the areas' stores and readers. No interface imports another,
 * and no area imports an interface.
 */
import type { Command } from 'commander';
import type { AppContext } from '../areas/area.js';
import type { Route } from '../http/router.js';
import { beaconInterface } from './beacon/index.js';
import { htsgetInterface } from './htsget/index.js';
import { refgetRoutes } from './refget/index.js';

export interface Interface {
  name: string;
  /** Its routes (it may load its modules first). */
  routes(app: AppContext): Route[] | Promise<Route[]>;
  /** Adds its options to `ga4gh serve`; their values reach routes() as `config.options`. */
  serveOptions?(serve: Command): void;
}

export const interfaces: Interface[] = [
  htsgetInterface,
  { name: 'refget', routes: refgetRoutes },
  beaconInterface,
  // Loaded when a server starts, not for every command line.
  { name: 'files', routes: async (app) => (await import('./files/index.js')).filesRoutes(app) },
];

/** Every interface's routes, in the interfaces' order. */
export async function routesOfInterfaces(app: AppContext): Promise<Route[]> {
  return (await Promise.all(interfaces.map((i) => i.routes(app)))).flat();
}
