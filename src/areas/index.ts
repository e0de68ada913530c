/** Every area of the service, in the order their routes, commands and listings appear. */
import type { Migration } from '../registry/migrations.js';
import type { Area } from './area.js';
export type { AppContext, Area } from './area.js';
import { continuousArea } from './continuous/index.js';
import { datasetsArea } from './datasets/index.js';
import { featuresArea } from './features/index.js';
import { infoArea } from './info/index.js';
import { ontologiesArea } from './ontologies/index.js';
import { peersArea } from './peers/index.js';
import { referencesArea } from './references/index.js';
import { rnaArea } from './rna/index.js';
import { variantsArea } from './variants/index.js';

export const areas: Area[] = [infoArea, datasetsArea, referencesArea, variantsArea, peersArea, rnaArea, ontologiesArea, featuresArea, continuousArea];

export function allMigrations(): Migration[] {
  return areas.flatMap((a) => a.migrations).sort((a, b) => a.version - b.version);
}
