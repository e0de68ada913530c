/** Every area of the service, in the order their routes, commands and listings appear. */
import type { Migration } from '../registry/migrations.js';
import type { AppContext, Area } from './area.js';
import type { Route } from '../http/router.js';
export type { AppContext, Area, CommandContext } from './area.js';
import { annotationsArea } from './annotations/index.js';
import { biometadataArea } from './biometadata/index.js';
import { continuousArea } from './continuous/index.js';
import { datasetsArea } from './datasets/index.js';
import { featuresArea } from './features/index.js';
import { infoArea } from './info/index.js';
import { ontologiesArea } from './ontologies/index.js';
import { peersArea } from './peers/index.js';
import { phenotypesArea } from './phenotypes/index.js';
import { readsArea } from './reads/index.js';
import { referencesArea } from './references/index.js';
import { rnaArea } from './rna/index.js';
import { variantsArea } from './variants/index.js';

export const areas: Area[] = [
  infoArea,
  datasetsArea,
  referencesArea,
  variantsArea,
  peersArea,
  rnaArea,
  ontologiesArea,
  biometadataArea,
  annotationsArea,
  phenotypesArea,
  readsArea,
  featuresArea,
  continuousArea,
];

/** Every area's migrations, in version order: the composition roots hand them to the registry. */
export function allMigrations(): Migration[] {
  return areas.flatMap((a) => a.migrations).sort((a, b) => a.version - b.version);
}

/** Every area's routes, by area, in the areas' order (an area may load its modules first). */
export function routesOfAreas(app: AppContext): Promise<Array<{ area: string; routes: Route[] }>> {
  return Promise.all(areas.map(async (area) => ({ area: area.name, routes: await area.routes(app) })));
}
