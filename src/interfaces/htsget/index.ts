/** htsget 1.3 (routes.ts): what it adds to the server and to `ga4gh serve`. */
import { Option, type Command } from 'commander';
import { integerAtLeast } from '../../cli/output.js';
import type { Interface } from '../index.js';
import { DEFAULT_SIGNED_URL_SECONDS } from './signing.js';

export const htsgetInterface: Interface = {
  name: 'htsget',
  async routes(app) {
    const { htsgetRoutes } = await import('./routes.js');
    return htsgetRoutes(app);
  },
  serveOptions(serve: Command) {
    serve
      .addOption(
        new Option('--signing-key <key>', 'key that signs the data URLs of htsget tickets; replicas must share it (default: a random key for this process)').env(
          'GA4GH_SIGNING_KEY',
        ),
      )
      .option('--signed-url-seconds <n>', 'how long the data URLs of an htsget ticket stay valid', integerAtLeast(1), DEFAULT_SIGNED_URL_SECONDS);
  },
};
