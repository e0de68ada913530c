/** The registry's tables, as Kysely sees them: each area declares its own. */
import type { ContinuousTables } from '../areas/continuous/store.js';
import type { DatasetTables } from '../areas/datasets/store.js';
import type { FeatureTables } from '../areas/features/store.js';
import type { OntologyTables } from '../areas/ontologies/store.js';
import type { PeerTables } from '../areas/peers/store.js';
import type { ReferenceTables } from '../areas/references/store.js';
import type { RnaTables } from '../areas/rna/store.js';
import type { VariantTables } from '../areas/variants/store.js';

export interface Database extends DatasetTables, ReferenceTables, RnaTables, PeerTables, VariantTables, OntologyTables, FeatureTables, ContinuousTables {}
