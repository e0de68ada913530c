/** The registry's tables, as Kysely sees them: each area declares its own. */
import type { DatasetTables } from '../areas/datasets/store.js';
import type { ReferenceTables } from '../areas/references/store.js';

export interface Database extends DatasetTables, ReferenceTables {}
