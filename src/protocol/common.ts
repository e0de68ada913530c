/** Shared message types of common.proto (schema digest section 1). */
import { message, t, type MessageDesc } from './schema.js';

export const OntologyTerm: MessageDesc = message('OntologyTerm', { termId: t.string, term: t.string });

export const ExternalIdentifier: MessageDesc = message('ExternalIdentifier', {
  database: t.string,
  identifier: t.string,
  version: t.string,
});

export const Program: MessageDesc = message('Program', {
  commandLine: t.string,
  id: t.string,
  name: t.string,
  prevProgramId: t.string,
  version: t.string,
});

export const Experiment: MessageDesc = message('Experiment', {
  id: t.string,
  name: t.string,
  description: t.string,
  messageCreateTime: t.string,
  messageUpdateTime: t.string,
  runTime: t.string,
  molecule: t.string,
  strategy: t.string,
  selection: t.string,
  library: t.string,
  libraryLayout: t.string,
  instrumentModel: t.string,
  instrumentDataFile: t.string,
  sequencingCenter: t.string,
  platformUnit: t.string,
  attributes: t.msg(() => Attributes),
});

export const Analysis: MessageDesc = message('Analysis', {
  id: t.string,
  name: t.string,
  description: t.string,
  created: t.string,
  updated: t.string,
  type: t.string,
  software: t.list(t.string),
  attributes: t.msg(() => Attributes),
});

export const AttributeValue: MessageDesc = message('AttributeValue', {
  stringValue: t.string,
  int64Value: t.int64,
  int32Value: t.int32,
  boolValue: t.bool,
  doubleValue: t.double,
  externalIdentifier: t.msg(() => ExternalIdentifier),
  ontologyTerm: t.msg(() => OntologyTerm),
  experiment: t.msg(() => Experiment),
  program: t.msg(() => Program),
  analysis: t.msg(() => Analysis),
  nullValue: t.enumOf('NULL_VALUE'),
  attributes: t.msg(() => Attributes),
  attributeList: t.msg(() => AttributeValueList),
}, { oneof: true });

export const AttributeValueList: MessageDesc = message('AttributeValueList', {
  values: t.list(t.msg(() => AttributeValue)),
});

export const Attributes: MessageDesc = message('Attributes', {
  attr: t.map(t.msg(() => AttributeValueList)),
});

/** In-memory shape of Attributes: `{attr: {key: {values: [{stringValue: 'x'}]}}}`. */
export type AttributeValueRecord = Partial<{
  stringValue: string;
  int64Value: number;
  int32Value: number;
  boolValue: boolean;
  doubleValue: number;
  attributes: AttributesRecord;
  attributeList: { values: AttributeValueRecord[] };
  [other: string]: unknown;
}>;
export interface AttributesRecord {
  attr: Record<string, { values: AttributeValueRecord[] }>;
}

/** Builds Attributes from plain key → values pairs, typing each value by its JavaScript type. */
export function attributesOf(entries: Record<string, Array<string | number | boolean>>): AttributesRecord {
  const attr: AttributesRecord['attr'] = {};
  for (const [key, values] of Object.entries(entries)) {
    attr[key] = {
      values: values.map((v) =>
        typeof v === 'string'
          ? { stringValue: v }
          : typeof v === 'boolean'
            ? { boolValue: v }
            : Number.isInteger(v)
              ? { int64Value: v }
              : { doubleValue: v },
      ),
    };
  }
  return { attr };
}
