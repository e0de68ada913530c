/**
 * Variant annotation sets of a dataset's variant sets, and a region query that lists the annotations
 * with their transcript effects (effect terms, HGVS, positions, SIFT and PolyPhen), with an effects filter.
 */
import type { AlleleLocation, Ga4ghClient, SearchVariantAnnotationsRequest, TranscriptEffect, VariantAnnotation, VariantAnnotationSet, VariantSet } from '../../../client/index.js';
import { errorText, h, jsonDetails, jsonLink, labelled, pagedTable, table } from '../dom.js';
import { datasetPicker, idNames, numberInput, openButton, termsFrom, termsText } from './common.js';
import { referenceNames } from './variants.js';
import type { View } from './view.js';

/** A location as the tools write it: 1-based, `start-end` for a range, then the sequences. */
function locationText(l: AlleleLocation | undefined): string {
  if (!l) return '';
  const place = (l.end ?? 0) > (l.start ?? 0) + 1 ? `${(l.start ?? 0) + 1}-${l.end}` : String((l.start ?? 0) + 1);
  return [place, [l.referenceSequence, l.alternateSequence].filter(Boolean).join('/')].filter(Boolean).join(' ');
}

/** An analysis result as VEP writes it: `tolerated(0.05)` (scores are served in thousandths). */
function resultText(effect: TranscriptEffect, analysis: string): string {
  const r = effect.analysisResults?.find((a) => a.analysisId === analysis);
  return r ? `${r.result ?? ''}${r.score === undefined ? '' : `(${r.score / 1000})`}` : '';
}

function annotationRows(annotations: VariantAnnotation[]) {
  return annotations.flatMap((a) => {
    const [, , , reference = '', start = ''] = idNames(a.variantId ?? ''); // the variant's names: dataset, tag, set, reference, start, digest
    const variant = [reference, start, h('a', { href: `variants/${encodeURIComponent(a.variantId ?? '')}`, target: '_blank', rel: 'noopener', 'aria-label': `JSON of variant ${reference}:${start}` }, 'variant')];
    const effects = a.transcriptEffects ?? [];
    if (!effects.length) return [[...variant, h('span', { class: 'muted' }, 'no effects'), '', '', '', '', '', '', '', '', '', jsonDetails(a)]];
    return effects.map((e, i) => [
      ...(i ? ['', '', ''] : variant),
      e.alternateBases,
      e.featureId,
      termsText(e.effects),
      e.hgvsAnnotation?.genomic,
      e.hgvsAnnotation?.transcript,
      e.hgvsAnnotation?.protein,
      locationText(e.cdnaLocation),
      locationText(e.cdsLocation),
      locationText(e.proteinLocation),
      resultText(e, 'SIFT'),
      resultText(e, 'PolyPhen'),
      i ? '' : jsonDetails(a),
    ]);
  });
}

async function annotationPanel(client: Ga4ghClient, set: VariantAnnotationSet, variantSet: VariantSet): Promise<HTMLElement> {
  const names = await referenceNames(client, variantSet);
  const datalist = h('datalist', { id: `annrefs-${set.id}` }, ...names.map((n) => h('option', { value: n })));
  const referenceName = h('input', { name: 'referenceName', value: names[0] ?? '', list: datalist.id, required: true });
  const start = numberInput('Start (0-based)', 'start', 0, { min: 0 });
  const end = numberInput('End (exclusive, 0: to the end)', 'end', 0, { min: 0 });
  const effects = h('input', { name: 'effects', placeholder: 'e.g. missense_variant, SO:0001627' });
  const pageSize = numberInput('Annotations per page', 'pageSize', 20, { min: 1, max: 1000 });
  const results = h('div', { 'aria-live': 'polite' });
  const show = () => {
    const request: SearchVariantAnnotationsRequest = {
      variantAnnotationSetId: set.id ?? '',
      referenceName: referenceName.value,
      start: Number(start.input.value),
      end: Number(end.input.value),
      pageSize: Number(pageSize.input.value),
    };
    const terms = termsFrom(effects.value);
    if (terms.length) request.effects = terms;
    results.replaceChildren(
      pagedTable(
        `Annotations in ${request.referenceName}:${request.start}-${request.end || 'end'}`,
        ['reference', 'start', 'variant', 'allele', 'feature', 'effects', 'HGVS g.', 'HGVS c.', 'HGVS p.', 'cDNA', 'CDS', 'protein', 'SIFT', 'PolyPhen', 'record'],
        client.searchVariantAnnotations(request),
        'variantAnnotations',
        annotationRows,
        [1],
      ),
    );
  };
  const form = h(
    'form',
    { 'aria-label': `Annotations in ${set.name}`, onsubmit: (e: Event) => (e.preventDefault(), show()) },
    labelled('Reference name', referenceName),
    datalist,
    start.field,
    end.field,
    labelled('Effects (terms or ids, comma-separated; subclasses match)', effects),
    pageSize.field,
    h('button', { type: 'submit' }, 'Search annotations'),
  );
  return h('section', {}, h('h3', {}, `Annotation set ${set.name}`), form, results);
}

export const annotationsView: View = {
  id: 'annotations',
  title: 'Annotations',
  area: 'annotations',
  async render(root, { client }) {
    const setsBox = h('div');
    const panel = h('div');
    const picker = await datasetPicker(client, async (datasetId) => {
      panel.replaceChildren();
      try {
        const variantSets = await client.searchVariantSets({ datasetId, pageSize: 1000 }).all(1000);
        const rows = [];
        for (const vs of variantSets) {
          for (const set of await client.searchVariantAnnotationSets({ variantSetId: vs.id ?? '', pageSize: 1000 }).all(1000)) {
            rows.push([
              set.name,
              vs.name,
              (set.analysis?.software ?? []).join(', '),
              set.analysis?.created,
              jsonLink('variantannotationsets', set.id ?? ''),
              openButton(`Open ${set.name}`, panel, () => annotationPanel(client, set, vs)),
            ]);
          }
        }
        setsBox.replaceChildren(table('Variant annotation sets', ['name', 'variant set', 'software', 'created', 'record', 'open'], rows.length ? rows : [[h('span', { class: 'muted' }, 'none')]]));
      } catch (e) {
        setsBox.replaceChildren(errorText(e));
      }
    });
    root.append(h('h2', {}, 'Variant annotations'), picker, setsBox, panel);
  },
};
