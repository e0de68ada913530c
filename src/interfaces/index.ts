/**
 * The interfaces of today served beside the 0.6.0a10 areas, each under a path of its own and over the
 * same registry (DESIGN.md, "Several interfaces over one registry"): their routes are not part of the
 * 0.6.0a10 API document, since each interface has its own specification.
 */
import type { AppContext } from '../areas/area.js';
import type { Route } from '../http/router.js';
import { refgetRoutes } from './refget/index.js';

export interface Interface {
  name: string;
  routes(app: AppContext): Route[] | Promise<Route[]>;
}

export const interfaces: Interface[] = [{ name: 'refget', routes: refgetRoutes }];

/** Every interface's routes, in the interfaces' order. */
export async function routesOfInterfaces(app: AppContext): Promise<Route[]> {
  return (await Promise.all(interfaces.map((i) => i.routes(app)))).flat();
}
