/**
 * Read group sets of a dataset with their read groups, and a region query over the chosen read groups
 * that lists the alignments page by page.
 */
import type { CigarUnit, Ga4ghClient, ReadAlignment, ReadGroupSet, SearchReadsRequest } from '../../../client/index.js';
import { h, jsonDetails, jsonLink, labelled, pagedTable, selectOf, table } from '../dom.js';
import { numberInput, referencesOf, setsOfDataset } from './common.js';
import type { View } from './view.js';

const CIGAR_CODES: Record<string, string> = {
  ALIGNMENT_MATCH: 'M', INSERT: 'I', DELETE: 'D', SKIP: 'N', CLIP_SOFT: 'S', CLIP_HARD: 'H', PAD: 'P', SEQUENCE_MATCH: '=', SEQUENCE_MISMATCH: 'X',
};
/** A CIGAR as SAM writes it (`76M`); `*` for none. */
export const cigarText = (cigar: CigarUnit[] | undefined) => (cigar?.length ? cigar.map((c) => `${c.operationLength}${CIGAR_CODES[c.operation ?? ''] ?? '?'}`).join('') : '*');

function flagsText(a: ReadAlignment): string {
  const flags = [
    a.numberReads === 2 ? `read ${(a.readNumber ?? 0) + 1} of 2` : '',
    a.alignment ? '' : 'unmapped',
    a.improperPlacement ? 'improper' : '',
    a.duplicateFragment ? 'duplicate' : '',
    a.secondaryAlignment ? 'secondary' : '',
    a.supplementaryAlignment ? 'supplementary' : '',
    a.failedVendorQualityChecks ? 'QC fail' : '',
  ];
  return flags.filter(Boolean).join(', ');
}

async function readsPanel(client: Ga4ghClient, set: ReadGroupSet): Promise<HTMLElement> {
  const groups = set.readGroups ?? [];
  const references = await referencesOf(client, groups[0]?.referenceSetId);
  const groupNames = new Map(groups.map((g) => [g.id ?? '', g.name ?? '']));
  const chosen = groups.map((g) => h('input', { type: 'checkbox', name: 'readGroup', value: g.id ?? '', checked: true, 'aria-label': `Include ${g.name}` }));
  const reference = selectOf('referenceId', references.map((r) => ({ value: r.id ?? '', label: r.name ?? '' })));
  const start = numberInput('Start (0-based)', 'start', 0, { min: 0 });
  const end = numberInput('End (exclusive, 0: to the end)', 'end', 0, { min: 0 });
  const pageSize = numberInput('Alignments per page', 'pageSize', 20, { min: 1, max: 1000 });
  const results = h('div', { 'aria-live': 'polite' });
  const show = () => {
    const request: SearchReadsRequest = {
      readGroupIds: chosen.filter((c) => c.checked).map((c) => c.value),
      referenceId: reference.value,
      start: Number(start.input.value),
      end: Number(end.input.value),
      pageSize: Number(pageSize.input.value),
    };
    const name = reference.selectedOptions[0]?.textContent ?? '';
    results.replaceChildren(
      pagedTable(
        `Alignments in ${name}:${request.start}-${request.end || 'end'}`,
        ['fragment', 'read group', 'position', 'strand', 'mapping quality', 'CIGAR', 'flags', 'mate', 'sequence', 'record'],
        client.searchReads(request),
        'alignments',
        (items) =>
          items.map((a) => [
            a.fragmentName,
            groupNames.get(a.readGroupId ?? '') ?? a.readGroupId,
            a.alignment?.position?.position,
            a.alignment?.position?.strand === 'NEG_STRAND' ? '-' : a.alignment ? '+' : '',
            a.alignment?.mappingQuality,
            cigarText(a.alignment?.cigar),
            flagsText(a),
            a.nextMatePosition ? `${a.nextMatePosition.referenceName}:${a.nextMatePosition.position}` : '',
            h('code', {}, a.alignedSequence ?? ''),
            jsonDetails(a),
          ]),
        [2, 4],
      ),
    );
  };
  const form = h(
    'form',
    { 'aria-label': `Alignments of ${set.name}`, onsubmit: (e: Event) => (e.preventDefault(), show()) },
    labelled('Reference', reference),
    start.field,
    end.field,
    pageSize.field,
    h('button', { type: 'submit' }, 'Search reads'),
  );
  return h(
    'section',
    {},
    h('h3', {}, `Read group set ${set.name}`),
    table(`Read groups of ${set.name}`, ['query', 'name', 'sample', 'description', 'library', 'platform', 'insert size', 'record'], groups.map((g, i) => [
      chosen[i],
      g.name,
      g.sampleName,
      g.description,
      g.experiment?.library,
      g.experiment?.instrumentModel,
      g.predictedInsertSize,
      jsonLink('readgroups', g.id ?? ''),
    ])),
    form,
    results,
  );
}

export const readsView: View = {
  id: 'reads',
  title: 'Reads',
  area: 'reads',
  async render(root, { client }) {
    root.append(
      h('h2', {}, 'Reads'),
      ...(await setsOfDataset(client, {
        caption: 'Read group sets',
        columns: ['name', 'read groups', 'aligned reads', 'unaligned reads'],
        search: (datasetId) => client.searchReadGroupSets({ datasetId, pageSize: 50 }),
        listField: 'readGroupSets',
        cells: (s) => [s.name, (s.readGroups ?? []).length, s.stats?.alignedReadCount, s.stats?.unalignedReadCount],
        jsonPath: 'readgroupsets',
        open: (s) => readsPanel(client, s),
        numeric: [1, 2, 3],
      })),
    );
  },
};
