/** Beacon v2 (routes.ts): what it adds to the server. */
import type { Interface } from '../index.js';

export const beaconInterface: Interface = {
  name: 'beacon',
  async routes(app) {
    const { beaconRoutes } = await import('./routes.js');
    return beaconRoutes(app);
  },
};
