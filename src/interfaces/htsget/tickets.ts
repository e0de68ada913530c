/**
 * A ticket's contents for each format, from the file's own index: the header, the data covering the
 * requested regions, and the end-of-file marker. BAM, VCF and BCF are cut at the virtual offsets of
 * their index's chunks, to BGZF block precision (the partial blocks at a cut made anew); CRAM is cut
 * at its containers. A region's data may hold records outside it, as the specification allows, never
 * fewer than it holds; records come once each, in file order, whatever the order of the regions.
 */
import { bcfRecordAt } from '../../formats/bcf.js';
import { BlockReader, cutBetween, EOF_BLOCK } from '../../formats/bgzf.js';
import { joinChunks, unpackOffset, type Chunk } from '../../formats/binning-index.js';
import { bamRecordAt } from '../../areas/reads/bam-file.js';
import { vcfRecordAt } from '../../areas/variants/vcf-files.js';
import type { BgzfLayout, FileLayouts } from './layouts.js';
import { UNPLACED, type Region, type TicketRequest } from './request.js';
import type { Format, ServedFile, ServedSet } from './sets.js';
import type { Ticket } from './ticket.js';

/** Where the record at a place of a block's data lies: its reference (number, or name for VCF) and 0-based start. */
type RecordAt = (data: Buffer, at: number) => { reference: number | string; start: number } | undefined;
const RECORD_AT: Record<'BAM' | 'VCF' | 'BCF', RecordAt> = { BAM: bamRecordAt, VCF: vcfRecordAt, BCF: bcfRecordAt };

/**
 * Chunks less than this many compressed bytes apart are one part of a ticket, the records between
 * taken along: each part costs the ticket two cut blocks read, inflated and copied (~0.4 ms), and the
 * client one more request.
 */
const JOIN_GAP = 256 * 1024;

/**
 * The chunks of a BGZF file that hold the records of a region, in file order, cut short where the
 * records pass the region, as htslib stops reading there: the index's bins for a region include
 * coarse bins whose chunks lie far on in the file (reads across a 1 Mb boundary sit in a bin of
 * 8 Mb), and a chunk runs to its bin's last record. A sorted file's records past the region's end
 * are of no use: so the first record of each chunk is read, and the chunks from the first that
 * begins past the end (or on another reference) are left out; and where the linear index points at
 * a record past the end (the first of the window after the region), the chunks end there.
 */
async function regionChunks(file: ServedFile, layout: BgzfLayout, region: Region, blocks: BlockReader): Promise<Chunk[]> {
  if (region.referenceName === UNPLACED) {
    // The reads without a position follow every placed record, up to the end of the data.
    const { index } = layout;
    if (index.stats().noCoordinate === 0) return [];
    return [{ begin: Math.max(index.unplacedStart(), layout.firstRecord), end: layout.dataEnd }];
  }
  const refId = file.referenceNames.indexOf(region.referenceName);
  if (refId < 0) return [];
  const chunks = layout.index.chunksOf(refId, region.start ?? 0, region.end ?? Number.POSITIVE_INFINITY);
  if (region.end === undefined) return chunks;
  const end = region.end;
  const reference = file.format === 'VCF' ? region.referenceName : refId;
  const recordAt = RECORD_AT[file.format as keyof typeof RECORD_AT];
  /** Whether the record at an offset begins past the region (false when its fields are not all in that block). */
  const past = async (offset: number) => {
    const { blockPosition, dataPosition } = unpackOffset(offset);
    const record = recordAt((await blocks.at(blockPosition)).data, dataPosition);
    return record !== undefined && (record.reference !== reference || record.start >= end);
  };
  const stop = layout.index.windowOffset(refId, end);
  const until = stop !== undefined && (await past(stop)) ? stop : Number.POSITIVE_INFINITY;
  const kept: Chunk[] = [];
  // One chunk after another: past the first chunk that begins past the end, no block need be read.
  for (const chunk of chunks) {
    if (chunk.begin >= until || (await past(chunk.begin))) break;
    kept.push({ begin: chunk.begin, end: Math.min(chunk.end, until) });
  }
  return kept;
}

/** The chunks of a BGZF file that hold the records of the regions, joined. */
async function chunksOf(file: ServedFile, layout: BgzfLayout, regions: Region[], blocks: BlockReader): Promise<Chunk[]> {
  const each = await Promise.all(regions.map((region) => regionChunks(file, layout, region, blocks)));
  return joinChunks(each.flat(), JOIN_GAP);
}

/**
 * BAM, VCF or BCF, from one file or several (a variant set of one file per contig): the header (of
 * the only file as it is; of several VCF files merged, as bcftools concat merges them; of several BCF
 * files, which share one contig dictionary, the first's), then each file's records in the set's order,
 * then the end-of-file block.
 */
async function bgzfTicket(set: ServedSet, files: ServedFile[], request: TicketRequest, ticket: Ticket, layouts: FileLayouts): Promise<void> {
  if (files.length > 1 && files[0].format === 'VCF') ticket.bytes('header', await layouts.mergedHeader(set, files));
  else ticket.pieces('header', files[0], (await layouts.bgzf(set, files[0])).header);
  if (!request.headerOnly) {
    for (const file of files) {
      const layout = await layouts.bgzf(set, file);
      const blocks = new BlockReader(layout.file, file.path);
      const chunks = request.regions ? await chunksOf(file, layout, request.regions, blocks) : [{ begin: layout.firstRecord, end: layout.dataEnd }];
      for (const chunk of chunks) ticket.pieces('body', file, await cutBetween(blocks, unpackOffset(chunk.begin), unpackOffset(chunk.end)));
    }
  }
  ticket.bytes('body', EOF_BLOCK);
}

/** CRAM: the header, the containers holding the regions' slices, and the file's own end-of-file container. */
async function cramTicket(set: ServedSet, file: ServedFile, request: TicketRequest, ticket: Ticket, layouts: FileLayouts): Promise<void> {
  const { cram, header, headerEnd, containerEnds, eofStart, size } = await layouts.cram(set, file);
  ticket.pieces('header', file, header);
  if (!request.headerOnly) {
    if (!request.regions) ticket.range('body', file, headerEnd, eofStart);
    else {
      const starts = new Set<number>();
      for (const region of request.regions) {
        const refId = region.referenceName === UNPLACED ? -1 : file.referenceNames.indexOf(region.referenceName);
        if (region.referenceName !== UNPLACED && refId < 0) continue;
        for (const slice of await cram.slicesOf(refId, region.start ?? 0, region.end ?? Number.POSITIVE_INFINITY)) starts.add(slice.containerStart);
      }
      for (const start of [...starts].sort((a, b) => a - b)) ticket.range('body', file, start, containerEnds.get(start)!);
    }
  }
  ticket.range('body', file, eofStart, size);
}

/** Fills `ticket` with what `request` asks of the set's files of `format`. */
export async function fillTicket(set: ServedSet, format: Format, request: TicketRequest, ticket: Ticket, layouts: FileLayouts): Promise<void> {
  const files = set.files.get(format)!;
  if (format === 'CRAM') await cramTicket(set, files[0], request, ticket, layouts);
  else await bgzfTicket(set, files, request, ticket, layouts);
}
