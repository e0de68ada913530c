/**
 * A genome browser (igv.js, served beside the page from node_modules) over one reference set: its
 * sequence, and a track for each set of the registry on it, named after the set: variant sets and
 * read group sets through htsget (VCF, BAM), feature sets through the features API, continuous sets
 * as their bigWig files. igv.js reads what it needs for the region shown, from this server only.
 */
import type { FeatureSet, Ga4ghClient, ReferenceSet } from '../../../client/index.js';
import type IgvModule from 'igv';
import { errorText, h, labelled, selectOf, table } from '../dom.js';
import type { View, ViewContext } from './view.js';

type Igv = typeof IgvModule;
type IgvBrowser = Awaited<ReturnType<Igv['createBrowser']>>;
type TrackConfig = Record<string, unknown>;

/** The bundle web/index.ts serves, loaded on the first visit to this view. */
const IGV_BUNDLE = 'ui/igv.esm.min.js';
/** The region first shown: the start of the first reference, this many bases (or all of a shorter one). */
const FIRST_REGION = 10_000;
/** Feature tracks ask for features over regions up to this wide; wider, igv.js asks to zoom in. */
const FEATURE_WINDOW = 1_000_000;

let igvLoaded: Promise<Igv> | undefined;
const loadIgv = () => (igvLoaded ??= import(/* the bundle is not part of the page's script */ new URL(IGV_BUNDLE, location.href).href).then((m) => m.default as Igv));

/** An address of this server, absolute: igv.js resolves no relative URLs of tickets. */
const served = (path: string) => new URL(path, new URL('.', location.href)).href;

/** One row of the track list: a set of the reference set, and its igv.js track when it can show one. */
interface TrackRow {
  name: string;
  kind: string;
  dataset: string;
  /** Undefined: not viewable, `why` says why. */
  config?: TrackConfig;
  why?: string;
}

/** GA4GH features over a region, as igv.js's annotation tracks take them. */
function featureReader(client: Ga4ghClient, set: FeatureSet) {
  return {
    async readFeatures(chr: string, start: number, end: number) {
      const features = await client.searchFeatures({ featureSetId: set.id, referenceName: chr, start: Math.max(0, Math.floor(start)), end: Math.ceil(end), pageSize: 1000 }).all();
      return features.map((f) => ({
        chr: f.referenceName,
        start: f.start,
        end: f.end,
        strand: f.strand === 'NEG_STRAND' ? '-' : f.strand === 'POS_STRAND' ? '+' : '.',
        name: f.name ?? f.geneSymbol,
        type: f.featureType?.term,
        id: f.id,
      }));
    },
  };
}

/**
 * Whether igv.js can read a read group set: its htsget reader takes BAM only, and a set registered
 * from a CRAM without a BAM beside it (`--alternate`) is served as CRAM alone.
 */
async function servedAsBam(htsgetUrl: string): Promise<boolean> {
  const res = await fetch(`${htsgetUrl}?class=header&format=BAM`);
  if (res.ok) return true;
  const body = await res.json().catch(() => undefined);
  if (body?.htsget?.error === 'UnsupportedFormat') return false;
  throw new Error(`${htsgetUrl} answered ${res.status}: ${body?.htsget?.message ?? res.statusText}`);
}

/** The tracks of every set on `referenceSetId`, dataset by dataset, in the order of the areas' views. */
async function tracksOf({ client, areas }: ViewContext, referenceSetId: string): Promise<TrackRow[]> {
  const rows: TrackRow[] = [];
  const on = (set: { referenceSetId?: string }) => set.referenceSetId === referenceSetId;
  for (const dataset of await client.searchDatasets({ pageSize: 1000 }).all()) {
    const datasetId = dataset.id ?? '';
    const datasetName = dataset.name ?? datasetId;
    if (areas.includes('variants')) {
      for (const set of (await client.searchVariantSets({ datasetId, pageSize: 1000 }).all()).filter(on)) {
        const url = served(`htsget/variants/${set.id}`);
        rows.push({ name: set.name ?? '', kind: 'variants (VCF by htsget)', dataset: datasetName, config: { type: 'variant', format: 'vcf', sourceType: 'htsget', url, name: set.name } });
      }
    }
    if (areas.includes('reads')) {
      const sets = (await client.searchReadGroupSets({ datasetId, pageSize: 1000 }).all()).filter((s) => s.readGroups?.[0]?.referenceSetId === referenceSetId);
      const bam = await Promise.all(sets.map((set) => servedAsBam(served(`htsget/reads/${set.id}`))));
      sets.forEach((set, i) => {
        const url = served(`htsget/reads/${set.id}`);
        const row: TrackRow = { name: set.name ?? '', kind: 'alignments (BAM by htsget)', dataset: datasetName };
        if (bam[i]) row.config = { type: 'alignment', format: 'bam', sourceType: 'htsget', url, name: set.name };
        else row.why = 'served as CRAM only; igv.js reads BAM by htsget';
        rows.push(row);
      });
    }
    if (areas.includes('features')) {
      for (const set of (await client.searchFeatureSets({ datasetId, pageSize: 1000 }).all()).filter(on)) {
        rows.push({
          name: set.name ?? '',
          kind: 'features',
          dataset: datasetName,
          config: { type: 'annotation', name: set.name, reader: featureReader(client, set), displayMode: 'EXPANDED', autoHeight: true, visibilityWindow: FEATURE_WINDOW, searchable: false },
        });
      }
    }
    if (areas.includes('continuous')) {
      for (const set of (await client.searchContinuousSets({ datasetId, pageSize: 1000 }).all()).filter(on)) {
        rows.push({ name: set.name ?? '', kind: 'signal (bigWig)', dataset: datasetName, config: { type: 'wig', format: 'bigwig', url: served(`files/continuoussets/${set.id}/bigwig`), name: set.name } });
      }
    }
  }
  return rows;
}

/**
 * igv.js's reference for a set: its registered FASTA read by range through its .fai (and .gzi when
 * bgzipped); a set registered from a sequence dictionary has no bases, only its references' names and
 * lengths, handed to igv.js as a chrom.sizes text.
 */
async function genomeOf(client: Ga4ghClient, set: ReferenceSet): Promise<{ genome: TrackConfig; firstRegion: string }> {
  const references = await client.searchReferences({ referenceSetId: set.id, pageSize: 1000 }).all();
  if (!references.length) throw new Error(`reference set ${set.name} has no references`);
  const first = references[0];
  const firstRegion = `${first.name}:1-${Math.min(first.length ?? FIRST_REGION, FIRST_REGION)}`;
  const files = served(`files/referencesets/${set.id}/`);
  const head = await fetch(files + 'fasta', { headers: { range: 'bytes=0-1' } });
  const base = { id: set.id, name: set.name, wholeGenomeView: false };
  if (head.status === 404) {
    const sizes = references.map((r) => `${r.name}\t${r.length}\n`).join('');
    return { genome: { ...base, format: 'chromsizes', fastaURL: URL.createObjectURL(new Blob([sizes], { type: 'text/plain' })) }, firstRegion };
  }
  if (!head.ok) throw new Error(`the FASTA of ${set.name} cannot be read: ${head.status} ${head.statusText}`);
  const magic = new Uint8Array(await head.arrayBuffer());
  const bgzipped = magic[0] === 0x1f && magic[1] === 0x8b;
  return { genome: { ...base, fastaURL: files + 'fasta', indexURL: files + 'fai', ...(bgzipped ? { compressedIndexURL: files + 'gzi' } : {}) }, firstRegion };
}

export const browserView: View = {
  id: 'browser',
  title: 'Genome browser',
  area: 'references',
  async render(root, context) {
    const { client } = context;
    const sets = await client.searchReferenceSets({ pageSize: 1000 }).all();
    root.append(h('h2', {}, 'Genome browser'));
    if (!sets.length) {
      root.append(h('p', { class: 'muted' }, 'No reference set is registered.'));
      return;
    }
    const igv = await loadIgv();
    igv.removeAllBrowsers(); // the browser of an earlier visit to this view
    const picker = selectOf('referenceSet', sets.map((s) => ({ value: s.id ?? '', label: s.name ?? s.id ?? '' })));
    const region = h('input', { name: 'region', placeholder: 'chr1:10000-20000', size: 32, required: true });
    const zoom = (direction: 'in' | 'out') => h('button', { type: 'button', onclick: () => (direction === 'in' ? browser?.zoomIn() : browser?.zoomOut()) }, `Zoom ${direction}`);
    const form = h(
      'form',
      { 'aria-label': 'Region', onsubmit: (e: Event) => (e.preventDefault(), void browser?.search(region.value.trim())) },
      labelled('Reference set', picker),
      labelled('Region (1-based, as chr:start-end)', region),
      h('button', { type: 'submit' }, 'Go'),
      zoom('out'),
      zoom('in'),
    );
    const trackList = h('div');
    const igvBox = h('div', { class: 'igv', 'data-state': 'loading' });
    root.append(form, trackList, igvBox);

    let browser: IgvBrowser | undefined;
    let opened = 0;
    const open = async (set: ReferenceSet) => {
      const mine = ++opened;
      igvBox.dataset.state = 'loading';
      trackList.replaceChildren(h('p', { class: 'muted' }, `Tracks of ${set.name}…`));
      if (browser) igv.removeBrowser(browser);
      browser = undefined;
      igvBox.replaceChildren();
      try {
        const [{ genome, firstRegion }, rows] = await Promise.all([genomeOf(client, set), tracksOf(context, set.id ?? '')]);
        if (mine !== opened) return;
        region.value = firstRegion;
        const created = await igv.createBrowser(igvBox, { reference: genome, locus: firstRegion, loadDefaultGenomes: false, showNavigation: false, tracks: [] } as never).finally(() => {
          if (genome.format === 'chromsizes') URL.revokeObjectURL(genome.fastaURL as string); // read while the browser is made
        });
        if (mine !== opened) return igv.removeBrowser(created);
        browser = created;
        // For scripts in the page (and its tests): igv.js's own API, on the element that shows it.
        Object.assign(igvBox, { igvBrowser: created });
        created.on('locuschange', (loci: Array<{ getLocusString(): string }>) => (region.value = loci[0]?.getLocusString() ?? region.value));
        const shown = new Map<TrackRow, unknown>();
        /** Shows or hides a row's track; a track that fails to load says why in its row, the others load on. */
        const toggle = async (row: TrackRow, on: boolean, note: HTMLElement) => {
          note.replaceChildren();
          try {
            if (on && !shown.has(row)) shown.set(row, await created.loadTrack(row.config as never));
            else if (!on && shown.has(row)) created.removeTrack(shown.get(row) as never), shown.delete(row);
          } catch (e) {
            note.replaceChildren(errorText(e));
          }
        };
        const cells = rows.map((row) => {
          if (!row.config) return { row, cell: h('span', { class: 'muted' }, `not viewable: ${row.why}`) };
          const note = h('span');
          const box = h('input', { type: 'checkbox', checked: true, 'aria-label': `Show ${row.name}`, onchange: (e: Event) => void toggle(row, (e.target as HTMLInputElement).checked, note) });
          return { row, cell: h('span', {}, box, note), load: () => toggle(row, true, note) };
        });
        trackList.replaceChildren(
          table(
            `Tracks of ${set.name}`,
            ['track', 'kind', 'dataset', 'shown'],
            cells.length ? cells.map(({ row, cell }) => [row.name, row.kind, row.dataset, cell]) : [[h('span', { class: 'muted' }, 'no set of the registry is on this reference set'), '', '', '']],
          ),
        );
        for (const { load } of cells) await load?.();
        if (mine !== opened) return;
        igvBox.dataset.state = 'ready';
        context.status(`Genome browser: ${set.name}, ${shown.size} tracks`);
      } catch (e) {
        if (mine !== opened) return;
        igvBox.dataset.state = 'failed';
        trackList.replaceChildren(errorText(e));
      }
    };
    picker.addEventListener('change', () => void open(sets.find((s) => s.id === picker.value)!));
    await open(sets[0]);
  },
};
