/**
 * The registry backends every registry test runs against: SQLite always, PostgreSQL when a server is
 * reachable (GA4GH_TEST_POSTGRES, default postgres://root@127.0.0.1:5432/test). Without one, the
 * PostgreSQL suites are reported as skipped with the reason, never silently passed.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { atEnd } from './helpers.js';

export const POSTGRES_ADMIN_URL = process.env.GA4GH_TEST_POSTGRES ?? 'postgres://root@127.0.0.1:5432/test';

export interface Backend {
  name: 'sqlite' | 'postgres';
  /** Set when this backend cannot run here: the reason it is skipped. */
  skip?: string;
  /** A location for a new, empty registry (a file in `dir`, or a fresh PostgreSQL database). */
  newLocation(dir: string): Promise<string>;
}

async function postgresUnavailable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (e) {
    return `no PostgreSQL server at ${POSTGRES_ADMIN_URL} (${(e as Error).message}); set GA4GH_TEST_POSTGRES or start one`;
  } finally {
    await client.end().catch(() => {});
  }
}


/** Creates a database of its own for one registry, dropped when the test file ends. */
export async function newPostgresDatabase(): Promise<string> {
  const name = `ga4gh_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  atEnd(async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = '/' + name;
  return url.toString();
}

const postgresSkip = await postgresUnavailable();

export const backends: Backend[] = [
  { name: 'sqlite', newLocation: async (dir) => path.join(dir, `registry-${randomBytes(4).toString('hex')}.sqlite`) },
  { name: 'postgres', skip: postgresSkip, newLocation: () => newPostgresDatabase() },
];
