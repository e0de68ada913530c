/**
 * The views of the page, in menu order. A new area adds one module here (a list of its sets and a
 * region or search view, as variants.ts and rna.ts do); the menu shows it when /info lists the area.
 */
import { annotationsView } from './annotations.js';
import { biosamplesView } from './biosamples.js';
import { browserView } from './browser.js';
import { continuousView } from './continuous.js';
import { datasetsView } from './datasets.js';
import { featuresView } from './features.js';
import { peersView } from './peers.js';
import { phenotypesView } from './phenotypes.js';
import { readsView } from './reads.js';
import { referencesView } from './references.js';
import { rnaView } from './rna.js';
import { serverView } from './server.js';
import { variantsView } from './variants.js';
import type { View } from './view.js';

export const views: View[] = [
  serverView,
  datasetsView,
  referencesView,
  browserView,
  variantsView,
  annotationsView,
  readsView,
  featuresView,
  continuousView,
  rnaView,
  biosamplesView,
  phenotypesView,
  peersView,
];
