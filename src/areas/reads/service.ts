/**
 * The reads area: read group sets, read groups, and the alignments of their BAM or CRAM files, read
 * by index on each request. A reads search answers as a stream of bytes written while the files are
 * read; it stops once the page is full and the record that follows it is found (look-ahead), and it
 * remembers where that record lies so the next page starts reading there.
 *
 * Order of the results (the same whatever the page size): the references of the reference set in its
 * order, then the reads without a position. Within a reference, by position, then by read group set
 * (dataset and name), then in file order. Without a position, by set, then in file order.
 */
import { GAException, invalid, notFound } from '../../protocol/errors.js';
import { decodeId, encodeId, IdKinds } from '../../protocol/ids.js';
import { attributesOf } from '../../protocol/common.js';
import { encodePageToken, isNonNegativeInteger, isString, keysetCursor, resolvePageSize, type PageQuery, type PagingLimits } from '../../protocol/paging.js';
import { keysetPage, type JsonSink, type SearchPage } from '../../protocol/reply.js';
import type { NamingForm } from '../../protocol/schema.js';
import { RegistryCache } from '../../registry/cache.js';
import type { Registry } from '../../registry/registry.js';
import { SampleLinks } from '../biometadata/links.js';
import { biosampleId } from '../biometadata/service.js';
import { datasetId, datasetNameOf } from '../datasets/service.js';
import { referenceSetId } from '../references/service.js';
import { SequenceFiles } from '../references/sequences.js';
import { getReferenceSetRow, holdsSequence, listReferences, type ReferenceRow, type ReferenceSetRow } from '../references/store.js';
import type { VirtualOffset } from '../../formats/bgzf.js';
import { ByteChunks } from '../variants/variant-writer.js';
import { AlignmentWriter, RUN } from './alignment-writer.js';
import { openAlignmentSource, type AlignmentSource } from './alignment-files.js';
import type { RecordCursor } from './bam-file.js';
import {
  SearchReadsResponse,
  type ExperimentRecord,
  type ProgramRecord,
  type ReadGroupRecord,
  type ReadGroupSetRecord,
  type SearchReadsQuery,
} from './messages.js';
import { getReadGroupSetRow, listReadGroupSets, type ReadGroupSetRow } from './store.js';

export const readGroupSetId = (datasetName: string, name: string) => encodeId([datasetName, 'rgs', name]);
export const readGroupId = (datasetName: string, setName: string, group: string) => encodeId([datasetName, 'rgs', setName, group]);

/** JSON text written in pieces. */
export interface JsonStream {
  write(sink: JsonSink, form: NamingForm): Promise<void>;
}

const EXPERIMENT_TAGS: Record<string, Exclude<keyof ExperimentRecord, 'attributes'>> = { LB: 'library', PU: 'platformUnit', CN: 'sequencingCenter', PL: 'instrumentModel', DT: 'runTime' };
/** @RG tags that become fields of the read group itself or of its experiment; the rest go to attributes. */
const MAPPED_TAGS = new Set(['ID', 'DS', 'SM', 'PI', 'PM', ...Object.keys(EXPERIMENT_TAGS)]);

/**
 * A read group as served. Its biosample is the one --biosample-id chose for the set, else the one its
 * SM tag names when `linked` (the sample names that are biosamples of the dataset) holds it.
 */
function toReadGroupRecord(row: ReadGroupSetRow, tags: Record<string, string>, programs: ProgramRecord[], linked: ReadonlySet<string>): ReadGroupRecord {
  const biosample = row.biosample_name ?? (tags.SM !== undefined && linked.has(tags.SM) ? tags.SM : undefined);
  const created = Date.parse(row.created_at);
  const experiment: ExperimentRecord = {};
  for (const [tag, field] of Object.entries(EXPERIMENT_TAGS)) if (tags[tag] !== undefined) experiment[field] = tags[tag];
  if (tags.PM !== undefined) experiment.attributes = attributesOf({ PM: [tags.PM] });
  const others: Record<string, string[]> = {};
  for (const [tag, value] of Object.entries(tags)) if (!MAPPED_TAGS.has(tag)) others[tag] = [value];
  const insert = tags.PI !== undefined ? Number(tags.PI) : NaN;
  return {
    id: readGroupId(row.dataset_name, row.name, tags.ID),
    datasetId: datasetId(row.dataset_name),
    name: tags.ID,
    description: tags.DS,
    sampleName: tags.SM,
    biosampleId: biosample !== undefined ? biosampleId(row.dataset_name, biosample) : undefined,
    experiment: Object.keys(experiment).length ? experiment : undefined,
    predictedInsertSize: Number.isSafeInteger(insert) ? insert : undefined,
    created,
    updated: created,
    programs,
    referenceSetId: referenceSetId(row.reference_set_name),
    attributes: Object.keys(others).length ? attributesOf(others) : undefined,
  };
}

function toProgramRecord(tags: Record<string, string>): ProgramRecord {
  return { id: tags.ID, name: tags.PN, commandLine: tags.CL, prevProgramId: tags.PP, version: tags.VN };
}

/** The set as served; `linked` holds the sample names (SM) that name a biosample of its dataset. */
export function toReadGroupSetRecord(row: ReadGroupSetRow, linked: ReadonlySet<string> = new Set()): ReadGroupSetRecord {
  const programs = (JSON.parse(row.programs) as Array<Record<string, string>>).map(toProgramRecord);
  const groups = JSON.parse(row.read_groups) as Array<Record<string, string>>;
  const stats =
    row.aligned_count !== null || row.unaligned_count !== null
      ? { alignedReadCount: toNumber(row.aligned_count), unalignedReadCount: toNumber(row.unaligned_count) }
      : undefined;
  return {
    id: readGroupSetId(row.dataset_name, row.name),
    datasetId: datasetId(row.dataset_name),
    name: row.name,
    stats,
    readGroups: groups.map((tags) => toReadGroupRecord(row, tags, programs, linked)),
  };
}

const toNumber = (v: number | null) => (v === null ? undefined : Number(v));

/**
 * The sample names a set's read groups are linked to biosamples by: their SM tags, each once, in
 * header order; none when --biosample-id chose the set's biosample.
 */
export function linkableSamples(row: ReadGroupSetRow): string[] {
  if (row.biosample_name !== null) return [];
  const groups = JSON.parse(row.read_groups) as Array<Record<string, string>>;
  return [...new Set(groups.flatMap((tags) => (tags.SM !== undefined ? [tags.SM] : [])))];
}

/** What serving one read group set needs, built once from the registry and kept while it is unchanged. */
interface SetContext {
  row: ReadGroupSetRow;
  /** The set without the biosamples its SM tags name (recordOf adds them): its read group ids and names. */
  record: ReadGroupSetRecord;
  groupIndex: Map<string, number>;
  /** The file's reference index of each reference name. */
  fileRefId: Map<string, number>;
  writer: AlignmentWriter;
  source: AlignmentSource;
}

/** A place in the results: [section (reference ordinal; the reference count for unplaced reads), position, set ordinal in the query, records of that set at that position already returned]. */
type ReadPosition = [number, number, number, number];
const isReadPosition = (p: unknown): p is ReadPosition => Array.isArray(p) && p.length === 4 && p.every(isNonNegativeInteger) && (p[3] as number) >= 1;

const INT32_MAX = 2 ** 31 - 1;
/** The state of Lane.writeRun's calls (one at a time: a thread builds one page at a time). */
const RUN_STATE = new Int32Array(RUN.fields);

/** One read group set's records in one section of the results, filtered to the window and the groups asked for. */
class Lane {
  /** Position of the current record in the order (0 for reads without a position). */
  sortPosition = -1;
  /** How many records of this lane share that position, the current one included. */
  atPosition = 0;
  group = 0;
  /** Whether writeRun may be used: the native writer is loaded, the groups asked for are among the set's first 32, and the window's numbers fit its 32 bits. */
  readonly runs: boolean;
  private readonly groupMask: number;
  /** After writeRun: why it stopped (tryAdvance's answer for the record after the last one written), and that record's place. */
  runStop: 0 | 1 | 2 = 1;
  lastPosition = 0;
  lastAt = 0;

  constructor(
    readonly ordinal: number,
    readonly context: SetContext,
    readonly cursor: RecordCursor,
    private readonly refId: number,
    private readonly start: number,
    private readonly end: number,
    private readonly groups: Set<number> | undefined,
    /** Records at or before this place were returned by earlier pages: [position, set ordinal, count]. */
    private readonly after: [number, number, number] | undefined,
  ) {
    const int32 = (n: number) => Number.isInteger(n) && n >= -1 && n <= INT32_MAX;
    const subset = groups ? [...groups] : [];
    this.runs =
      context.writer.writesRuns &&
      subset.every((g) => g < 32) &&
      int32(start) &&
      (end === Number.POSITIVE_INFINITY || int32(end)) &&
      (after === undefined || after.every(int32));
    // A subset of the set's groups is a bit each (0: every group).
    this.groupMask = this.runs ? subset.reduce((mask, g) => mask | (1 << g), 0) : 0;
  }

  /**
   * Writes the current record and those after it, as the page loop does one by one with tryAdvance,
   * in one call to the native writer (alignment-writer.ts, writeRun); returns how many it wrote (0:
   * write the current record through the writer, one by one). Then runStop is what tryAdvance would
   * have answered after the last of them, and lastPosition and lastAt are that record's place.
   */
  writeRun(out: ByteChunks, form: NamingForm, written: number, pageSize: number, budgetLeft: number): number {
    const state = RUN_STATE;
    const cursor = this.cursor;
    const after = this.after;
    state[RUN.at] = cursor.at;
    state[RUN.end] = cursor.end;
    state[RUN.form] = form === 'camel' ? 0 : 1;
    state[RUN.written] = written;
    state[RUN.pageSize] = Math.min(pageSize, INT32_MAX);
    state[RUN.budgetLeft] = Math.max(Math.min(budgetLeft, INT32_MAX), 0);
    state[RUN.refId] = this.refId;
    state[RUN.start] = this.start;
    state[RUN.windowEnd] = Math.min(this.end, INT32_MAX);
    state[RUN.sortPosition] = this.sortPosition;
    state[RUN.atPosition] = this.atPosition;
    state[RUN.after] = after ? 1 : 0;
    state[RUN.afterPosition] = after ? after[0] : 0;
    state[RUN.afterOrdinal] = after ? after[1] : 0;
    state[RUN.afterCount] = after ? after[2] : 0;
    state[RUN.ordinal] = this.ordinal;
    state[RUN.groupMask] = this.groupMask;
    state[RUN.group] = this.group;
    this.context.writer.writeRun(cursor.bytes, out, state);
    const count = state[RUN.count];
    if (count === 0) return 0;
    cursor.at = state[RUN.at];
    cursor.end = state[RUN.end];
    this.sortPosition = state[RUN.sortPosition];
    this.atPosition = state[RUN.atPosition];
    this.group = state[RUN.group];
    this.runStop = state[RUN.stop] as 0 | 1 | 2;
    this.lastPosition = state[RUN.lastPosition];
    this.lastAt = state[RUN.lastAt];
    return count;
  }

  /** Moves to the next record of the lane: 1 found, 0 none left, 2 more of the file must be read first. */
  tryAdvance(): 0 | 1 | 2 {
    const cursor = this.cursor;
    for (;;) {
      if (!cursor.step()) return 2;
      const refId = cursor.refId;
      if (refId !== this.refId) {
        if (this.refId >= 0) return 0; // the next reference has begun
        continue;
      }
      let position = 0;
      if (this.refId >= 0) {
        position = cursor.position;
        if (position >= this.end) return 0;
        // A record starting in the window overlaps it (it covers at least one base): no CIGAR walk.
        if (position < this.start && cursor.referenceEnd() <= this.start) continue;
      }
      if (this.groups) {
        const group = this.context.writer.groupOf(cursor.bytes, cursor.at, cursor.end);
        if (!this.groups.has(group)) continue;
        this.group = group;
      } else {
        this.group = -1; // found when written
      }
      this.atPosition = position === this.sortPosition ? this.atPosition + 1 : 1;
      this.sortPosition = position;
      const after = this.after;
      if (after && (position < after[0] || (position === after[0] && (this.ordinal < after[1] || (this.ordinal === after[1] && this.atPosition <= after[2]))))) {
        continue;
      }
      return 1;
    }
  }

  /** The same, reading the file as needed: false when the lane is done. */
  async advance(): Promise<boolean> {
    for (;;) {
      const found = this.tryAdvance();
      if (found !== 2) return found === 1;
      if (!(await this.cursor.fill())) return false;
    }
  }

  /** Starts counting as if `count` records at `position` came before (a lane resumed at a remembered offset). */
  resumeCount(position: number, count: number): void {
    this.sortPosition = position;
    this.atPosition = count;
  }
}

/** Where the record after a page lies, and its place in the order. */
interface ResumePoint {
  offset: VirtualOffset;
  sortPosition: number;
  atPosition: number;
}

const CONTEXT_CACHE_SIZE = 64;
const RESUME_POINTS = 4096;

export function readService(registry: Registry, limits: PagingLimits, registryCacheMs: number) {
  const setRows = new RegistryCache<ReadGroupSetRow>(registryCacheMs);
  const referenceSets = new RegistryCache<{ set: ReferenceSetRow; references: ReferenceRow[] }>(registryCacheMs);
  const contexts = new Map<string, SetContext>();
  const sequences = new SequenceFiles();
  const resumePoints = new Map<string, ResumePoint>();
  // A read group's biosample, unless --biosample-id chose one, is the one its SM tag names, whichever
  // was registered first: looked up as call sets look up theirs (links.ts).
  const links = new SampleLinks(registry, registryCacheMs);
  /** Each set's record as served, by the links it was built with (kept while the links are). */
  const setRecords = new WeakMap<Set<string>, ReadGroupSetRecord>();

  const referenceSetOf = async (name: string) =>
    (await referenceSets.get(name, async () => {
      const set = await getReferenceSetRow(registry, name);
      return set && { set, references: await listReferences(registry, { referenceSetName: name }, undefined) };
    })) ?? undefined;

  function contextFor(row: ReadGroupSetRow): SetContext {
    const key = `${row.dataset_name}\0${row.name}`;
    const cached = contexts.get(key);
    // A set removed and added again has a new created_at: rebuild then.
    if (cached && cached.row.created_at === row.created_at) {
      contexts.delete(key);
      contexts.set(key, cached);
      return cached;
    }
    const record = toReadGroupSetRecord(row);
    const referenceNames = JSON.parse(row.reference_names) as string[];
    const groupNames = record.readGroups.map((g) => g.name);
    const fetch = async (seqId: number, start: number, end: number) => {
      const found = await referenceSetOf(row.reference_set_name);
      if (!found) throw new Error(`reference set '${row.reference_set_name}' is gone`);
      return (await sequences.bases(found.set, referenceNames[seqId], start - 1, end)).toString('latin1');
    };
    const context: SetContext = {
      row,
      record,
      groupIndex: new Map(groupNames.map((n, i) => [n, i])),
      fileRefId: new Map(referenceNames.map((n, i) => [n, i])),
      writer: new AlignmentWriter({
        datasetName: row.dataset_name,
        setName: row.name,
        readGroupNames: groupNames,
        readGroupIds: record.readGroups.map((g) => g.id),
        referenceNames,
      }),
      source: openAlignmentSource({ path: row.path, indexPath: row.index_path, indexKind: row.index_kind }, fetch, groupNames),
    };
    contexts.set(key, context);
    if (contexts.size > CONTEXT_CACHE_SIZE) contexts.delete(contexts.keys().next().value!);
    return context;
  }

  /** The set as served, each read group with its biosample: the one --biosample-id chose, or the one its SM tag names. */
  async function recordOf(row: ReadGroupSetRow): Promise<ReadGroupSetRecord> {
    const linked = await links.linked(row.dataset_name, ['read group set', row.name, row.created_at], linkableSamples(row));
    let record = setRecords.get(linked);
    if (!record) setRecords.set(linked, (record = toReadGroupSetRecord(row, linked)));
    return record;
  }

  async function rowOf(datasetName: string, name: string): Promise<ReadGroupSetRow | undefined> {
    return setRows.get(JSON.stringify([datasetName, name]), () => getReadGroupSetRow(registry, datasetName, name));
  }

  /** A failure to read a set's file is the server's (503), named by set; the cause is for the log. */
  const unreadable = (row: ReadGroupSetRow, error: unknown) => GAException.unreadable('the alignment file', `read group set '${row.name}'`, error);

  return {
    async searchReadGroupSets(request: { datasetId: string; name?: string; biosampleId?: string } & PageQuery): Promise<SearchPage<ReadGroupSetRecord>> {
      const { pageSize, fingerprint, after } = keysetCursor('readgroupsets', request, limits, isString);
      const datasetName = await datasetNameOf(registry, request.datasetId);
      const recordsOf = (rows: ReadGroupSetRow[]) => Promise.all(rows.map(recordOf));
      if (request.biosampleId === undefined) {
        const rows = await listReadGroupSets(registry, { datasetName, name: request.name }, after, pageSize + 1);
        return keysetPage(await recordsOf(rows), pageSize, fingerprint, (r) => r, (r) => r.name);
      }
      const [owner, , biosample] = decodeId(request.biosampleId, IdKinds.biosample);
      // The sets with a read group of that biosample, as served; a biosample of another dataset has none here.
      const wanted = biosampleId(datasetName, biosample);
      const candidates = owner === datasetName ? await recordsOf(await listReadGroupSets(registry, { datasetName, name: request.name }, after)) : [];
      const records = candidates.filter((r) => r.readGroups.some((g) => g.biosampleId === wanted)).slice(0, pageSize + 1);
      return keysetPage(records, pageSize, fingerprint, (r) => r, (r) => r.name);
    },

    /**
     * When the sets of the read groups asked for were registered, as the registry cache knows them
     * ('' for a set that is not registered): what a page of their alignments depends on in the registry.
     */
    async registrationOf(readGroupIds: string[]): Promise<string> {
      // Asked for twice a page (when a page is built ahead, and when it is taken): names, not JSON.
      const sets = new Map<string, readonly string[]>();
      for (const id of readGroupIds) {
        const names = decodeId(id, IdKinds.readGroup);
        sets.set(`${names[0]}\0${names[2]}`, names);
      }
      const times = await Promise.all(
        [...sets.keys()].sort().map(async (set) => {
          const [datasetName, , name] = sets.get(set)!;
          return (await rowOf(datasetName, name))?.created_at ?? '';
        }),
      );
      return times.join('\n');
    },

    async getReadGroupSet(id: string): Promise<ReadGroupSetRecord> {
      const [datasetName, , name] = decodeId(id, IdKinds.readGroupSet);
      const row = await rowOf(datasetName, name);
      if (!row) throw notFound('read group set', id);
      return recordOf(row);
    },

    async getReadGroup(id: string): Promise<ReadGroupRecord> {
      const [datasetName, , setName, group] = decodeId(id, IdKinds.readGroup);
      const row = await rowOf(datasetName, setName);
      const context = row && contextFor(row);
      const index = context?.groupIndex.get(group);
      if (!context || index === undefined) throw notFound('read group', id);
      return (await recordOf(context.row)).readGroups[index];
    },

    /**
     * Whether a page of this search is quick to build: at most `maxAlignments` alignments, all read from
     * BAM files (a CRAM slice of 10,000 reads takes tens of milliseconds to decode). False when a read
     * group is not registered, so that the search itself answers why.
     */
    async quickPage(request: SearchReadsQuery, maxAlignments: number): Promise<boolean> {
      if (resolvePageSize(request.pageSize, limits) > maxAlignments) return false;
      for (const id of request.readGroupIds) {
        const [datasetName, , setName] = decodeId(id, IdKinds.readGroup);
        const row = await rowOf(datasetName, setName);
        if (!row || row.index_kind === 'crai') return false;
      }
      return true;
    },

    /**
     * Checks the request and opens the files (every 400 and 404 happens here, and the first record is
     * read, so an unreadable file is a 503 before any text is written), then returns the page as a stream.
     */
    async searchReads(request: SearchReadsQuery): Promise<JsonStream> {
      const { pageSize, fingerprint, after } = keysetCursor('reads', request, limits, isReadPosition);
      if (request.readGroupIds.length === 0) throw invalid("field 'readGroupIds' must name at least one read group");
      // The sets asked for, each with the groups asked for (undefined: every group of the set).
      const chosen = new Map<string, { context: SetContext; groups: Set<number> }>();
      for (const id of request.readGroupIds) {
        const [datasetName, , setName, group] = decodeId(id, IdKinds.readGroup);
        const row = await rowOf(datasetName, setName);
        const context = row && contextFor(row);
        const index = context?.groupIndex.get(group);
        if (!context || index === undefined) throw new GAException('notFound', `no read group with id '${id}' (field 'readGroupIds')`);
        const key = `${datasetName}\0${setName}`;
        if (!chosen.has(key)) chosen.set(key, { context, groups: new Set() });
        chosen.get(key)!.groups.add(index);
      }
      const sets = [...chosen.values()].sort((a, b) =>
        a.context.row.dataset_name === b.context.row.dataset_name
          ? a.context.row.name < b.context.row.name ? -1 : 1
          : a.context.row.dataset_name < b.context.row.dataset_name ? -1 : 1,
      );
      const referenceSetNames = [...new Set(sets.map((s) => s.context.row.reference_set_name))];
      if (referenceSetNames.length > 1) {
        throw invalid(`the read groups of field 'readGroupIds' are aligned to different reference sets (${referenceSetNames.join(', ')}); search them separately`);
      }
      const referenceSet = await referenceSetOf(referenceSetNames[0]);
      if (!referenceSet) throw new GAException('unavailable', `reference set '${referenceSetNames[0]}' is not registered any more`);
      const cram = sets.find((s) => s.context.row.index_kind === 'crai');
      if (cram && !holdsSequence(referenceSet.set)) {
        throw invalid(
          `field 'readGroupIds': read group set '${cram.context.row.name}' is a CRAM file on reference set '${referenceSet.set.name}', which holds no bases to decode it with (it was registered from a sequence dictionary); register the set from its FASTA to search these reads`,
        );
      }
      const references = referenceSet.references;

      // The sections to read: one reference, or every reference then the reads without a position.
      let sections: number[];
      let start = request.start ?? 0;
      let end = request.end ?? 0;
      if (start < 0) throw invalid(`field 'start' must not be negative (got ${start})`);
      if (end < 0) throw invalid(`field 'end' must not be negative (got ${end})`);
      if (request.referenceId !== undefined) {
        const [setName, name] = decodeId(request.referenceId, IdKinds.reference);
        if (setName !== referenceSet.set.name) {
          throw invalid(`field 'referenceId' names a reference of reference set '${setName}', but the read groups are aligned to '${referenceSet.set.name}'`);
        }
        const ordinal = references.findIndex((r) => r.name === name);
        if (ordinal === -1) throw new GAException('notFound', `no reference with id '${request.referenceId}' (field 'referenceId')`);
        if (end === 0) end = Number(references[ordinal].length);
        if (end < start) throw invalid(`field 'end' (${end}) must not be less than field 'start' (${start})`);
        sections = [ordinal];
      } else {
        if (start !== 0 || end !== 0) throw invalid("fields 'start' and 'end' need a 'referenceId'");
        sections = [...references.keys(), references.length];
        end = Number.POSITIVE_INFINITY;
      }
      if (after) sections = sections.filter((s) => s >= after[0]);
      const single = sets.length === 1 ? sets[0].context : undefined;
      const resumeKey = (position: ReadPosition) => `${single?.row.created_at}\0${fingerprint}\0${position.join(',')}`;
      const point = single && after ? resumePoints.get(resumeKey(after)) : undefined;

      /** The lanes of one section, each at its first record (lanes without one are left out). */
      async function lanesOf(section: number, firstSection: boolean): Promise<Lane[]> {
        const lanes: Lane[] = [];
        for (let ordinal = 0; ordinal < sets.length; ordinal++) {
          const { context, groups } = sets[ordinal];
          const unplaced = section === references.length;
          const refId = unplaced ? -1 : context.fileRefId.get(references[section].name);
          if (refId === undefined) continue;
          const resumeFrom = firstSection && after && after[0] === section ? after : undefined;
          const windowStart = unplaced ? 0 : Math.max(start, resumeFrom ? resumeFrom[1] : 0);
          const usePoint = resumeFrom && point && ordinal === resumeFrom[2] ? point : undefined;
          const all = groups.size === context.record.readGroups.length;
          const laneOf = (cursor: RecordCursor) =>
            new Lane(ordinal, context, cursor, refId, start, end, all ? undefined : groups, resumeFrom && [resumeFrom[1], resumeFrom[2], resumeFrom[3]]);
          try {
            let cursor = await context.source.records(refId, windowStart, end, usePoint?.offset);
            if (!cursor) continue;
            let lane = laneOf(cursor);
            if (usePoint) {
              lane.resumeCount(usePoint.sortPosition, usePoint.atPosition - 1);
              // Only a record found where it was seen before is trusted; else the index is asked after all.
              const found = await lane.advance();
              if (found && lane.sortPosition === usePoint.sortPosition && lane.atPosition === usePoint.atPosition) {
                lanes.push(lane);
                continue;
              }
              await cursor.close();
              cursor = await context.source.records(refId, windowStart, end);
              if (!cursor) continue;
              lane = laneOf(cursor);
            }
            if (await lane.advance()) lanes.push(lane);
            else await cursor.close();
          } catch (e) {
            for (const l of lanes) await l.cursor.close();
            throw unreadable(context.row, e);
          }
        }
        return lanes;
      }

      let sectionAt = 0;
      let lanes: Lane[] = [];
      let section = -1;
      /** The lane holding the next record in the order, reading on to later sections as needed; undefined at the end. */
      async function nextLane(moved?: Lane): Promise<Lane | undefined> {
        if (moved && !(await moved.advance().catch((e) => Promise.reject(unreadable(moved.context.row, e))))) {
          await moved.cursor.close();
          lanes = lanes.filter((l) => l !== moved);
        }
        while (lanes.length === 0) {
          if (sectionAt >= sections.length) return undefined;
          section = sections[sectionAt++];
          lanes = await lanesOf(section, sectionAt === 1);
        }
        return smallest(lanes);
      }
      const first = await nextLane();
      const budget = limits.pageByteBudget;
      const response = SearchReadsResponse;

      return {
        async write(sink, form) {
          const out = ByteChunks.forPage();
          out.text('{' + response.listKey[form] + ':[');
          let written = 0;
          // The place of the last record written (a ReadPosition, kept in numbers: no array per read).
          let lastSection = 0;
          let lastPosition = 0;
          let lastOrdinal = 0;
          let lastAt = 0;
          let more = false;
          try {
            for (let lane = first; lane; ) {
              if (written === pageSize || (written > 0 && out.total >= budget)) {
                more = true; // look-ahead: a record follows the last one written
                const offset = single && written > 0 ? lane.cursor.offset() : undefined;
                if (offset) {
                  const key = resumeKey([lastSection, lastPosition, lastOrdinal, lastAt]);
                  rememberResumePoint(key, { offset, sortPosition: lane.sortPosition, atPosition: lane.atPosition });
                }
                break;
              }
              // One lane (one set): a run of records in one native call, where the writer allows it;
              // else this record through the writer, and the next found as the run would have.
              const run = lanes.length === 1 && lane.runs ? lane.writeRun(out, form, written, pageSize, budget - out.total) : 0;
              let found: 0 | 1 | 2;
              if (run > 0) {
                written += run;
                lastPosition = lane.lastPosition;
                lastAt = lane.lastAt;
                found = lane.runStop;
              } else {
                const { cursor, context } = lane;
                const group = lane.group >= 0 ? lane.group : context.writer.groupOf(cursor.bytes, cursor.at, cursor.end);
                context.writer.write(cursor.bytes, cursor.at, cursor.end, group, form, out, written > 0);
                written++;
                lastPosition = lane.sortPosition;
                lastAt = lane.atPosition;
                // The common case, one lane with its next record already read: no promise at all.
                found = lanes.length === 1 ? lane.tryAdvance() : 2;
              }
              lastSection = section;
              lastOrdinal = lane.ordinal;
              if (out.full()) for (const chunk of out.take()) await sink.write(chunk);
              if (found === 1) continue;
              if (found === 0) {
                await lane.cursor.close();
                lanes = [];
                lane = await nextLane();
              } else lane = await nextLane(lane);
            }
          } finally {
            for (const lane of lanes) await lane.cursor.close();
          }
          let closing = ']';
          if (more && written > 0) closing += ',' + response.tokenKey[form] + ':' + JSON.stringify(encodePageToken(fingerprint, [lastSection, lastPosition, lastOrdinal, lastAt]));
          out.text(closing + '}');
          for (const chunk of out.finish()) await sink.write(chunk);
        },
      };
    },
  };

  function rememberResumePoint(key: string, point: ResumePoint): void {
    resumePoints.set(key, point);
    if (resumePoints.size > RESUME_POINTS) resumePoints.delete(resumePoints.keys().next().value!);
  }
}

/** The lane whose current record comes first: by position, then by set. */
function smallest(lanes: Lane[]): Lane {
  let best = lanes[0];
  for (let i = 1; i < lanes.length; i++) {
    const lane = lanes[i];
    if (lane.sortPosition < best.sortPosition || (lane.sortPosition === best.sortPosition && lane.ordinal < best.ordinal)) best = lane;
  }
  return best;
}

export type ReadService = ReturnType<typeof readService>;
