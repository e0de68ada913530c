/**
 * Individuals and biosamples of a dataset; for one biosample, its individual and what is linked to it
 * (call sets of the dataset's variant sets, read group sets, RNA quantifications of its quantification sets).
 */
import type { Biosample, Ga4ghClient } from '../../../client/index.js';
import { type Child, errorText, h, jsonLink, pagedTable, table } from '../dom.js';
import { datasetPicker, openButton, termText } from './common.js';
import type { View } from './view.js';

async function biosamplePanel(client: Ga4ghClient, areas: string[], datasetId: string, sample: Biosample): Promise<HTMLElement> {
  const biosampleId = sample.id ?? '';
  const individual = sample.individualId ? await client.getIndividual(sample.individualId) : undefined;
  const callSets: Child[][] = [];
  if (areas.includes('variants')) {
    for (const vs of await client.searchVariantSets({ datasetId, pageSize: 1000 }).all(1000)) {
      for await (const c of client.searchCallSets({ variantSetId: vs.id ?? '', biosampleId, pageSize: 1000 })) callSets.push([c.name, vs.name, jsonLink('callsets', c.id ?? '')]);
    }
  }
  const quantifications: Child[][] = [];
  if (areas.includes('rna')) {
    for (const qs of await client.searchRnaQuantificationSets({ datasetId, pageSize: 1000 }).all(1000)) {
      for await (const q of client.searchRnaQuantifications({ rnaQuantificationSetId: qs.id ?? '', biosampleId, pageSize: 1000 })) {
        quantifications.push([q.name, qs.name, jsonLink('rnaquantifications', q.id ?? '')]);
      }
    }
  }
  const readGroupSets: Child[][] = [];
  if (areas.includes('reads')) {
    for await (const s of client.searchReadGroupSets({ datasetId, biosampleId, pageSize: 1000 })) readGroupSets.push([s.name, (s.readGroups ?? []).map((g) => g.name).join(', '), jsonLink('readgroupsets', s.id ?? '')]);
  }
  const none = [[h('span', { class: 'muted' }, 'none')]];
  return h(
    'section',
    {},
    h('h3', {}, `Biosample ${sample.name}`),
    table(`Individual of ${sample.name}`, ['name', 'description', 'species', 'sex', 'record'], individual
      ? [[individual.name, individual.description, termText(individual.species), termText(individual.sex), jsonLink('individuals', individual.id ?? '')]]
      : none),
    areas.includes('variants') ? table(`Call sets of ${sample.name}`, ['name', 'variant set', 'record'], (callSets.length ? callSets : none)) : null,
    areas.includes('reads') ? table(`Read group sets of ${sample.name}`, ['name', 'read groups', 'record'], readGroupSets.length ? readGroupSets : none) : null,
    areas.includes('rna') ? table(`RNA quantifications of ${sample.name}`, ['name', 'quantification set', 'record'], (quantifications.length ? quantifications : none)) : null,
  );
}

export const biosamplesView: View = {
  id: 'biosamples',
  title: 'Biosamples',
  area: 'biometadata',
  async render(root, { client, areas }) {
    const individualsBox = h('div');
    const biosamplesBox = h('div');
    const panel = h('div');
    const picker = await datasetPicker(client, async (datasetId) => {
      // Biosamples name their individual by id: the table shows the name.
      const individualNames = new Map<string, string>();
      try {
        for (const i of await client.searchIndividuals({ datasetId, pageSize: 1000 }).all(5000)) individualNames.set(i.id ?? '', i.name ?? '');
      } catch (e) {
        individualsBox.replaceChildren(errorText(e));
        return;
      }
      const showBiosamples = (individualId?: string, individualName?: string) => {
        panel.replaceChildren();
        biosamplesBox.replaceChildren(
          pagedTable(
            individualName ? `Biosamples of ${individualName}` : 'Biosamples',
            ['name', 'description', 'disease', 'individual', 'age at collection', 'record', 'open'],
            client.searchBiosamples({ datasetId, individualId, pageSize: 50 }),
            'biosamples',
            (items) =>
              items.map((b) => [
                b.name,
                b.description,
                termText(b.disease),
                b.individualId ? jsonLink('individuals', b.individualId, individualNames.get(b.individualId) ?? b.individualId) : '',
                b.individualAgeAtCollection?.age,
                jsonLink('biosamples', b.id ?? ''),
                openButton(`Open ${b.name}`, panel, () => biosamplePanel(client, areas, datasetId, b)),
              ]),
          ),
        );
      };
      individualsBox.replaceChildren(
        pagedTable('Individuals', ['name', 'description', 'species', 'sex', 'record', 'biosamples'], client.searchIndividuals({ datasetId, pageSize: 50 }), 'individuals', (items) =>
          items.map((i) => [
            i.name,
            i.description,
            termText(i.species),
            termText(i.sex),
            jsonLink('individuals', i.id ?? ''),
            h('button', { type: 'button', onclick: () => showBiosamples(i.id, i.name) }, `Biosamples of ${i.name}`),
          ]),
        ),
      );
      showBiosamples();
    });
    root.append(h('h2', {}, 'Individuals and biosamples'), picker, individualsBox, biosamplesBox, panel);
  },
};
