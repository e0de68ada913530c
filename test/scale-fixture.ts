/**
 * What the scale-out tests (replicas, repo copy) fill a registry with and ask of a server: a dataset,
 * a reference set, a variant set, RNA quantifications and peers, and a fixed list of requests paged in
 * small pages, whose answers are compared between servers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { insertBiosample } from '../src/areas/biometadata/store.js';
import { addDataset } from '../src/areas/datasets/store.js';
import { upsertPeer } from '../src/areas/peers/store.js';
import { loadReferenceSet } from '../src/areas/references/loader.js';
import { loadQuantification } from '../src/areas/rna/loader.js';
import { addQuantificationSet } from '../src/areas/rna/store.js';
import { loadVariantSet } from '../src/areas/variants/loader.js';
import type { Registry } from '../src/registry/registry.js';
import { copyFixture, idOf, type TestServer } from './helpers.js';

export interface FixtureFiles {
  fasta: string;
  plainFasta: string;
  phase1: string;
  kallisto: string;
  cufflinks: string;
}

/** Copies the data files into `dir` once; every registry of a test file registers the same paths. */
export function fixtureFiles(dir: string): FixtureFiles {
  const sets = path.join(dir, 'sets');
  fs.mkdirSync(sets, { recursive: true });
  const fasta = copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz', sets);
  copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.fai', sets);
  copyFixture('ga4gh-server/referenceSets/NCBI37.fa.gz.gzi', sets);
  return {
    fasta,
    plainFasta: copyFixture('compliance/ref_brca1.fa', sets),
    phase1: copyFixture('ga4gh-server/datasets/dataset1/variants/1kgPhase1', dir),
    kallisto: copyFixture('ga4gh-server/abundance.trimmed.txt', dir),
    cufflinks: copyFixture('ga4gh-server/cufflinks.txt', dir),
  };
}

export async function fillRegistry(registry: Registry, files: FixtureFiles, peers: string[] = []): Promise<void> {
  await addDataset(registry, 'ds', 'scale-out test data');
  await addDataset(registry, 'ds2');
  await loadReferenceSet(registry, files.fasta, { assemblyId: 'GRCh37' });
  await loadReferenceSet(registry, files.plainFasta, { name: 'hg37' });
  await loadVariantSet(registry, 'ds', [files.phase1], { referenceset: 'NCBI37' });
  await loadVariantSet(registry, 'ds', [path.join(files.phase1, 'chr2.vcf.gz')], { referenceset: 'NCBI37', name: 'chr2' });
  await insertBiosample(registry, { dataset_name: 'ds', name: 'BS1', individual_name: null, fields: '{}' });
  await addQuantificationSet(registry, 'ds', 'rna', 'two programs');
  await loadQuantification(registry, 'ds', 'rna', files.kallisto, { name: 'kallisto', biosampleId: 'BS1' });
  await loadQuantification(registry, 'ds', 'rna', files.cufflinks, { name: 'cufflinks' });
  for (const url of peers) await upsertPeer(registry, url, { note: { values: [{ stringValue: url }] } }, 'operator');
}

/** A search, paged with a small page size so that tokens matter. */
export interface PagedSearch {
  path: string;
  request: Record<string, unknown>;
  list: string;
  /** Where one record is fetched by id (the id appended), when the API has such a GET. */
  get?: string;
}

export const searches: PagedSearch[] = [
  { path: '/datasets/search', request: { pageSize: 1 }, list: 'datasets', get: '/datasets/' },
  { path: '/referencesets/search', request: { pageSize: 1 }, list: 'referenceSets', get: '/referencesets/' },
  { path: '/references/search', request: { referenceSetId: idOf('NCBI37'), pageSize: 1 }, list: 'references', get: '/references/' },
  { path: '/variantsets/search', request: { datasetId: idOf('ds'), pageSize: 1 }, list: 'variantSets', get: '/variantsets/' },
  { path: '/callsets/search', request: { variantSetId: idOf('ds', 'vs', '1kgPhase1'), pageSize: 4 }, list: 'callSets', get: '/callsets/' },
  {
    path: '/variants/search',
    request: { variantSetId: idOf('ds', 'vs', '1kgPhase1'), referenceName: '1', start: 0, end: 0, pageSize: 7, callSetIds: [] },
    list: 'variants',
    get: '/variants/',
  },
  { path: '/rnaquantificationsets/search', request: { datasetId: idOf('ds') }, list: 'rnaQuantificationSets', get: '/rnaquantificationsets/' },
  { path: '/rnaquantifications/search', request: { rnaQuantificationSetId: idOf('ds', 'rna'), pageSize: 1 }, list: 'rnaQuantifications', get: '/rnaquantifications/' },
  {
    path: '/expressionlevels/search',
    request: { rnaQuantificationId: idOf('ds', 'rna', 'kallisto'), pageSize: 3 },
    list: 'expressionLevels',
    get: '/expressionlevels/',
  },
  {
    path: '/expressionlevels/search',
    request: { rnaQuantificationId: idOf('ds', 'rna', 'cufflinks'), threshold: 1, pageSize: 5 },
    list: 'expressionLevels',
    get: '/expressionlevels/',
  },
  { path: '/peers/list', request: { pageSize: 1 }, list: 'peers' },
];

/**
 * Every page of a search, each page asked of the next server in turn (so a token one server wrote is
 * continued by another); the raw page bodies in order.
 */
export async function pagesAcross(servers: TestServer[], search: PagedSearch): Promise<any[]> {
  const pages: any[] = [];
  let token: string | undefined;
  do {
    const server = servers[pages.length % servers.length];
    const res = await server.post(search.path, token ? { ...search.request, pageToken: token } : search.request);
    if (res.status !== 200) throw new Error(`${search.path} on ${server.url} answered ${res.status}: ${res.text}`);
    pages.push(res.json);
    token = res.json.nextPageToken;
  } while (token);
  return pages;
}

/** Each record of the pages fetched by id from `server`, where the API has a GET for it. */
export async function fetchedById(server: TestServer, search: PagedSearch, pages: any[]): Promise<any[]> {
  if (!search.get) return [];
  const out = [];
  for (const record of pages.flatMap((p) => p[search.list])) {
    const res = await server.get(search.get + record.id);
    if (res.status !== 200) throw new Error(`GET ${search.get}${record.id} on ${server.url} answered ${res.status}: ${res.text}`);
    out.push(res.json);
  }
  return out;
}
