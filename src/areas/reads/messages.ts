/** Reads-area messages, with the 0.6.0a10 field set (reads.proto, read_service.proto; schema digest section 10). */
import { Attributes, Experiment, Program, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const Position = message('Position', {
  referenceName: t.string,
  position: t.int64,
  strand: t.enumOf('STRAND_UNSPECIFIED', 'NEG_STRAND', 'POS_STRAND'),
});

export const ReadStats = message('ReadStats', {
  alignedReadCount: t.int64,
  unalignedReadCount: t.int64,
  baseCount: t.int64,
});

export const ReadGroup = message('ReadGroup', {
  id: t.string,
  datasetId: t.string,
  name: t.string,
  description: t.string,
  sampleName: t.string,
  biosampleId: t.string,
  experiment: t.msg(() => Experiment),
  predictedInsertSize: t.int32,
  created: t.int64,
  updated: t.int64,
  stats: t.msg(() => ReadStats),
  programs: t.list(t.msg(() => Program)),
  referenceSetId: t.string,
  attributes: t.msg(() => Attributes),
});

export const ReadGroupSet = message('ReadGroupSet', {
  id: t.string,
  datasetId: t.string,
  name: t.string,
  stats: t.msg(() => ReadStats),
  readGroups: t.list(t.msg(() => ReadGroup)),
  attributes: t.msg(() => Attributes),
});

export const CigarUnit = message('CigarUnit', {
  operation: t.enumOf(
    'OPERATION_UNSPECIFIED',
    'ALIGNMENT_MATCH',
    'INSERT',
    'DELETE',
    'SKIP',
    'CLIP_SOFT',
    'CLIP_HARD',
    'PAD',
    'SEQUENCE_MATCH',
    'SEQUENCE_MISMATCH',
  ),
  operationLength: t.int64,
  referenceSequence: t.string,
});

export const LinearAlignment = message('LinearAlignment', {
  position: t.msg(() => Position),
  mappingQuality: t.int32,
  cigar: t.list(t.msg(() => CigarUnit)),
});

/** Written as bytes by alignment-writer.ts (the hot path); this description gives the field names. */
export const ReadAlignment = message('ReadAlignment', {
  id: t.string,
  readGroupId: t.string,
  fragmentName: t.string,
  improperPlacement: t.bool,
  duplicateFragment: t.bool,
  numberReads: t.int32,
  fragmentLength: t.int32,
  readNumber: t.int32,
  failedVendorQualityChecks: t.bool,
  alignment: t.msg(() => LinearAlignment),
  secondaryAlignment: t.bool,
  supplementaryAlignment: t.bool,
  alignedSequence: t.string,
  alignedQuality: t.list(t.int32),
  nextMatePosition: t.msg(() => Position),
  attributes: t.msg(() => Attributes),
});

export const SearchReadGroupSetsRequest = message('SearchReadGroupSetsRequest', {
  datasetId: t.required(t.string),
  name: t.string,
  biosampleId: t.string,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchReadGroupSetsResponse = searchResponse('SearchReadGroupSetsResponse', 'readGroupSets', ReadGroupSet);

export const SearchReadsRequest = message('SearchReadsRequest', {
  readGroupIds: t.required(t.list(t.string, { acceptSingle: true })),
  referenceId: t.string,
  start: t.int64,
  end: t.int64,
  pageSize: t.int32,
  pageToken: t.string,
});
export const SearchReadsResponse = searchResponse('SearchReadsResponse', 'alignments', ReadAlignment);

export interface ReadStatsRecord {
  alignedReadCount?: number;
  unalignedReadCount?: number;
}

export interface ExperimentRecord {
  library?: string;
  platformUnit?: string;
  sequencingCenter?: string;
  instrumentModel?: string;
  runTime?: string;
  attributes?: AttributesRecord;
}

export interface ProgramRecord {
  id?: string;
  name?: string;
  commandLine?: string;
  prevProgramId?: string;
  version?: string;
}

export interface ReadGroupRecord {
  id: string;
  datasetId: string;
  name: string;
  description?: string;
  sampleName?: string;
  biosampleId?: string;
  experiment?: ExperimentRecord;
  predictedInsertSize?: number;
  created: number;
  updated: number;
  programs: ProgramRecord[];
  referenceSetId: string;
  attributes?: AttributesRecord;
}

export interface ReadGroupSetRecord {
  id: string;
  datasetId: string;
  name: string;
  stats?: ReadStatsRecord;
  readGroups: ReadGroupRecord[];
}

export interface SearchReadsQuery {
  readGroupIds: string[];
  referenceId?: string;
  start?: number;
  end?: number;
  pageSize?: number;
  pageToken?: string;
}
