/**
 * The envelope of every Beacon answer: `meta` (the beacon's id, the API version, the schemas and the
 * granularity returned, and the request as it was understood), `responseSummary`, and for count and
 * record answers `response.resultSets`, one per dataset. Records come as JSON text, written by their
 * entry types; the envelope is written around them.
 *
 * Each dataset answers at its own granted granularity (access decision): the answer's granularity is
 * the highest of them, a dataset granted less than it is reported at its own level in its result
 * set's `info`, and a dataset granted `boolean` only adds to `responseSummary.exists` (a result set
 * needs a count).
 */
import type { BeaconGranularity } from '../../areas/datasets/store.js';
import type { BeaconRequest } from './request.js';

export const API_VERSION = 'v2.1.1';

export interface BeaconContext {
  beaconId: string;
}

/** A schema an answer's records follow, as `returnedSchemas` names it. */
export interface ReturnedSchema {
  entityType: string;
  schema: string;
}

export interface Handover {
  handoverType: { id: string; label: string };
  url: string;
  note?: string;
}

/** What one dataset answers, at the granularity granted for it. */
export interface DatasetAnswer {
  /** The dataset's Beacon id: its name. */
  id: string;
  granted: BeaconGranularity;
  exists: boolean;
  /** Every match, whatever the pagination (granted count or record). */
  count: number;
  /** The records of the page asked for, as JSON text (granted record). */
  records: string[];
  handovers?: Handover[];
}

const LEVELS: readonly BeaconGranularity[] = ['boolean', 'count', 'record'];
const highest = (levels: BeaconGranularity[]): BeaconGranularity =>
  levels.reduce<BeaconGranularity>((a, b) => (LEVELS.indexOf(b) > LEVELS.indexOf(a) ? b : a), 'boolean');

/** `meta` of the informational endpoints (info, configuration, map, entry types, filtering terms). */
export function informationalMeta(context: BeaconContext, returnedSchemas: ReturnedSchema[] = []) {
  return { beaconId: context.beaconId, apiVersion: API_VERSION, returnedSchemas };
}

/** `meta.receivedRequestSummary`: the request as it was read (the defaults it took filled in). */
export function requestSummaryOf(request: BeaconRequest | undefined, parametersKey?: string) {
  const summary: Record<string, unknown> = {
    apiVersion: request?.apiVersion ?? API_VERSION,
    requestedSchemas: (request?.requestedSchemas ?? []).map((s) => ({ ...s })),
    pagination: request ? { ...request.pagination } : { skip: 0, limit: 10 },
    requestedGranularity: request?.requestedGranularity ?? 'boolean',
  };
  if (!request) return summary;
  if (request.filters.length) summary.filters = request.filters.map((f) => f.id);
  if (parametersKey && Object.keys(request.parameters).length) summary.requestParameters = { [parametersKey]: request.parameters };
  summary.includeResultsetResponses = request.includeResultsetResponses;
  if (request.testMode !== undefined) summary.testMode = request.testMode;
  return summary;
}

export interface AnswerOptions {
  request: BeaconRequest;
  returnedSchemas: ReturnedSchema[];
  /** The key the entry type's parameters are summarised under (`g_variant`). */
  parametersKey?: string;
  /** Said in the answer's `info.warnings` (filters this beacon does not know, ...). */
  warnings: Record<string, string[]>;
  handovers?: Handover[];
}

const included = (answer: DatasetAnswer, include: BeaconRequest['includeResultsetResponses']) =>
  include === 'ALL' || (include === 'HIT' && answer.exists) || (include === 'MISS' && !answer.exists);

/**
 * The answer's JSON, as pieces of text to send in order: the records of a record answer can be
 * megabytes (a variant with the calls of 2,504 samples), and are never joined into one string.
 */
export function writeAnswer(context: BeaconContext, answers: DatasetAnswer[], options: AnswerOptions): string[] {
  const { request } = options;
  const returned = highest(answers.map((a) => a.granted));
  const counted = answers.filter((a) => a.granted !== 'boolean');
  const meta = {
    ...informationalMeta(context, options.returnedSchemas),
    returnedGranularity: returned,
    receivedRequestSummary: requestSummaryOf(request, options.parametersKey),
  };
  const summary: Record<string, unknown> = { exists: answers.some((a) => a.exists) };
  if (returned !== 'boolean') summary.numTotalResults = counted.reduce((n, a) => n + a.count, 0);
  const head: Record<string, unknown> = { meta, responseSummary: summary };
  const warnings = Object.fromEntries(Object.entries(options.warnings).filter(([, list]) => list.length));
  if (Object.keys(warnings).length) head.info = { warnings };
  if (options.handovers?.length) head.beaconHandovers = options.handovers;
  const headText = JSON.stringify(head);
  if (returned === 'boolean') return [headText];

  const pieces = [headText.slice(0, -1), ',"response":{"resultSets":['];
  let first = true;
  for (const answer of counted) {
    if (!included(answer, request.includeResultsetResponses)) continue;
    const set: Record<string, unknown> = { id: answer.id, setType: 'dataset', exists: answer.exists, resultsCount: answer.count };
    set.info = { returnedGranularity: answer.granted };
    if (answer.handovers?.length) set.resultsHandovers = answer.handovers;
    const setText = JSON.stringify(set);
    pieces.push((first ? '' : ',') + setText.slice(0, -1) + ',"results":[');
    first = false;
    answer.records.forEach((record, i) => pieces.push(i ? ',' + record : record));
    pieces.push(']}');
  }
  pieces.push(']}}');
  return pieces;
}
