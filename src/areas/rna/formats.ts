/**
 * The quantification tables this server reads (RSEM, kallisto, salmon, Cufflinks): how each is
 * recognised from its header, and which columns fill which ExpressionLevel fields. Pure text handling:
 * no files, no registry.
 */
import { UserError } from '../../user-error.js';

export const FORMATS = ['rsem', 'kallisto', 'salmon', 'cufflinks'] as const;
export type FormatName = (typeof FORMATS)[number];
export type Units = 'TPM' | 'FPKM';

/** ExpressionLevel fields a source may or may not have, recorded per quantification. */
export type OptionalField = 'rawReadCount' | 'confIntervalLow' | 'confIntervalHigh';

interface FormatSpec {
  /** As users know it, for messages and the default program name. */
  label: string;
  /** The first column, which names the feature; one of these. */
  nameColumns: readonly string[];
  /** Columns every file of this format has, beside the name column. */
  required: readonly string[];
  /** The expression column of each unit the format can give, the first being the default. */
  expression: Partial<Record<Units, string>>;
  rawReadCount?: string;
  confidence?: Partial<Record<Units, [low: string, high: string]>>;
  /** Text columns kept per row in attributes, under their column names ('-' means no value). */
  attributes?: readonly string[];
}

const SPECS: Record<FormatName, FormatSpec> = {
  // RSEM *.isoforms.results (transcript_id first) and *.genes.results (gene_id first); the CI columns
  // are there only when RSEM ran with --calc-ci.
  rsem: {
    label: 'RSEM',
    nameColumns: ['transcript_id', 'gene_id'],
    required: ['length', 'effective_length', 'expected_count', 'TPM', 'FPKM'],
    expression: { TPM: 'TPM', FPKM: 'FPKM' },
    rawReadCount: 'expected_count',
    confidence: {
      TPM: ['TPM_ci_lower_bound', 'TPM_ci_upper_bound'],
      FPKM: ['FPKM_ci_lower_bound', 'FPKM_ci_upper_bound'],
    },
  },
  // kallisto quant's abundance.tsv.
  kallisto: {
    label: 'kallisto',
    nameColumns: ['target_id'],
    required: ['length', 'eff_length', 'est_counts', 'tpm'],
    expression: { TPM: 'tpm' },
    rawReadCount: 'est_counts',
  },
  // salmon quant's quant.sf.
  salmon: {
    label: 'salmon',
    nameColumns: ['Name'],
    required: ['Length', 'EffectiveLength', 'TPM', 'NumReads'],
    expression: { TPM: 'TPM' },
    rawReadCount: 'NumReads',
  },
  // Cufflinks genes.fpkm_tracking / isoforms.fpkm_tracking: no read counts, a confidence interval
  // and a status per row (OK, LOWDATA, HIDATA, FAIL).
  cufflinks: {
    label: 'Cufflinks',
    nameColumns: ['tracking_id'],
    required: ['gene_id', 'gene_short_name', 'locus', 'FPKM', 'FPKM_conf_lo', 'FPKM_conf_hi', 'FPKM_status'],
    expression: { FPKM: 'FPKM' },
    confidence: { FPKM: ['FPKM_conf_lo', 'FPKM_conf_hi'] },
    attributes: ['FPKM_status', 'gene_short_name', 'locus'],
  },
};

export const programOf = (format: FormatName) => SPECS[format].label;

/** One expression row as read from a file. Optional values are null when the source has no such column. */
export interface ExpressionRow {
  name: string;
  expression: number;
  rawReadCount: number | null;
  confIntervalLow: number | null;
  confIntervalHigh: number | null;
  /** JSON of {column: value} for the format's text columns, or null when there are none. */
  attributes: string | null;
}

/** Where a file's lines go: knows the header's column positions, turns each data line into a row. */
export interface TableReader {
  format: FormatName;
  units: Units;
  fields: OptionalField[];
  readRow(line: string, lineNumber: number): ExpressionRow;
}

export class FormatError extends UserError {
  constructor(lineNumber: number, reason: string) {
    super(`line ${lineNumber}: ${reason}`);
  }
}

const missingColumns = (spec: FormatSpec, header: string[]) => spec.required.filter((c) => !header.includes(c));

/**
 * The format a header is most like: the one whose name column comes first (each format names its
 * first column differently), else the one with most of its columns present (at least two). A header
 * with a column missing is still recognised, so the error can name the column.
 */
function detectFormat(header: string[]): FormatName | undefined {
  const byName = FORMATS.find((f) => SPECS[f].nameColumns.includes(header[0]));
  if (byName) return byName;
  let best: FormatName | undefined;
  let bestCount = 1;
  for (const f of FORMATS) {
    const present = SPECS[f].required.length - missingColumns(SPECS[f], header).length;
    if (present > bestCount) [best, bestCount] = [f, present];
  }
  return best;
}

// Decimal numbers as the tools write them (1, 0.5, 3.2e-05); not NaN, inf or empty.
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Reads a header line: checks it against the format (detected when not given) and returns the reader
 * of the data lines that follow. Refuses with the line number and the reason.
 */
export function readHeader(line: string, requested: FormatName | undefined, units: Units | undefined): TableReader {
  const header = line.split('\t').map((c) => c.trim());
  const format = requested ?? detectFormat(header);
  if (!format) {
    throw new FormatError(
      1,
      `the header (first column '${header[0]}') is not that of an RSEM, kallisto, salmon or Cufflinks table; give --format if it is one`,
    );
  }
  const spec = SPECS[format];
  if (!spec.nameColumns.includes(header[0])) {
    throw new FormatError(1, `not a ${spec.label} header: the first column is '${header[0]}', expected ${spec.nameColumns.map((c) => `'${c}'`).join(' or ')}`);
  }
  const missing = missingColumns(spec, header);
  if (missing.length) throw new FormatError(1, `not a ${spec.label} header: missing column(s) ${missing.map((c) => `'${c}'`).join(', ')}`);
  const given = Object.keys(spec.expression) as Units[];
  const chosen = units ?? given[0];
  const expressionColumn = spec.expression[chosen];
  if (expressionColumn === undefined) throw new UserError(`${spec.label} tables give ${given.join(' or ')} only, not ${chosen}`);

  const at = (column: string) => header.indexOf(column);
  const expression = at(expressionColumn);
  const raw = spec.rawReadCount ? at(spec.rawReadCount) : -1;
  const bounds = spec.confidence?.[chosen];
  const [low, high] = bounds?.every((c) => header.includes(c)) ? bounds.map(at) : [-1, -1];
  const attributeColumns = (spec.attributes ?? []).map((c) => [c, at(c)] as const);
  const fields: OptionalField[] = [];
  if (raw >= 0) fields.push('rawReadCount');
  if (low >= 0) fields.push('confIntervalLow', 'confIntervalHigh');

  const width = header.length;
  const number = (cells: string[], i: number, lineNumber: number): number => {
    const text = cells[i];
    if (!NUMBER.test(text)) throw new FormatError(lineNumber, `column '${header[i]}' is not a number: '${text.slice(0, 40)}'`);
    return Number(text);
  };

  return {
    format,
    units: chosen,
    fields,
    readRow(line, lineNumber) {
      const cells = line.split('\t');
      if (cells.length !== width) throw new FormatError(lineNumber, `${cells.length} column(s), the header has ${width}`);
      const name = cells[0].trim();
      if (!name) throw new FormatError(lineNumber, `the feature name (column '${header[0]}') is empty`);
      let attributes: string | null = null;
      if (attributeColumns.length) {
        const kept: Record<string, string> = {};
        for (const [column, i] of attributeColumns) if (cells[i] !== '-' && cells[i] !== '') kept[column] = cells[i];
        attributes = JSON.stringify(kept);
      }
      return {
        name,
        expression: number(cells, expression, lineNumber),
        rawReadCount: raw >= 0 ? number(cells, raw, lineNumber) : null,
        confIntervalLow: low >= 0 ? number(cells, low, lineNumber) : null,
        confIntervalHigh: high >= 0 ? number(cells, high, lineNumber) : null,
        attributes,
      };
    },
  };
}
