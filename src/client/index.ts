/**
 * The typed client of a ga4gh-server (import from 'ga4gh-server/client'):
 *
 *   const client = new Ga4ghClient('http://127.0.0.1:8000');
 *   for await (const variant of client.searchVariants({ variantSetId, referenceName: '1', end: 100000 })) ...
 */
export * from './api.js';
export { ClientCore, Ga4ghError, Paged, retryAfterMs, type ClientOptions } from './core.js';
