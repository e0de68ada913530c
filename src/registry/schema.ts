/**
 * The registry's tables, as Kysely sees them. Empty here, because the registry knows no area: each
 * area adds its own tables from its store, by declaration merging:
 *
 *   declare module '../../registry/schema.js' {
 *     interface Database extends VariantTables {}
 *   }
 */
export interface Database {}
