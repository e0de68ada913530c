/**
 * A ticket's contents for each format, from the file's own index: the header, the data covering the
 * requested regions, and the end-of-file marker. BAM, VCF and BCF are cut at the virtual offsets of
 * their index's chunks, to BGZF block precision (the partial blocks at a cut made anew); CRAM is cut
 * at its containers. A region's data may hold records outside it, as the specification allows, never
 * fewer than it holds; records come once each, in file order, whatever the order of the regions.
 */
import { cutBetween, EOF_BLOCK } from '../../formats/bgzf.js';
import { joinChunks, unpackOffset, type Chunk, type PackedOffset } from '../../formats/binning-index.js';
import type { BgzfLayout, FileLayouts } from './layouts.js';
import { UNPLACED, type Region, type TicketRequest } from './request.js';
import type { Format, ServedFile, ServedSet } from './sets.js';
import type { Ticket } from './ticket.js';

const START: PackedOffset = 0;

/** The data of the file between two packed virtual offsets, as ticket pieces. */
async function cut(ticket: Ticket, cls: 'header' | 'body', file: ServedFile, layout: BgzfLayout, begin: PackedOffset, end: PackedOffset): Promise<void> {
  ticket.pieces(cls, file, await cutBetween(layout.file, unpackOffset(begin), unpackOffset(end), file.path));
}

/** The chunks of a BGZF file that hold the records of the regions. */
function chunksOf(file: ServedFile, layout: BgzfLayout, regions: Region[]): Chunk[] {
  return joinChunks(
    regions.flatMap((region) => {
      if (region.referenceName === UNPLACED) {
        // The reads without a position follow every placed record, up to the end of the data.
        const { index } = layout;
        if (index.stats().noCoordinate === 0) return [];
        return [{ begin: Math.max(index.unplacedStart(), layout.firstRecord), end: layout.dataEnd }];
      }
      const refId = file.referenceNames.indexOf(region.referenceName);
      return refId < 0 ? [] : layout.index.chunksOf(refId, region.start ?? 0, region.end ?? Number.POSITIVE_INFINITY);
    }),
  );
}

/**
 * BAM, VCF or BCF, from one file or several (a variant set of one file per contig): the header (of
 * the only file as it is; of several VCF files merged, as bcftools concat merges them; of several BCF
 * files, which share one contig dictionary, the first's), then each file's records in the set's order,
 * then the end-of-file block.
 */
async function bgzfTicket(set: ServedSet, files: ServedFile[], request: TicketRequest, ticket: Ticket, layouts: FileLayouts): Promise<void> {
  if (files.length > 1 && files[0].format === 'VCF') ticket.bytes('header', await layouts.mergedHeader(set, files));
  else {
    const first = await layouts.bgzf(set, files[0]);
    await cut(ticket, 'header', files[0], first, START, first.firstRecord);
  }
  if (!request.headerOnly) {
    for (const file of files) {
      const layout = await layouts.bgzf(set, file);
      const chunks = request.regions ? chunksOf(file, layout, request.regions) : [{ begin: layout.firstRecord, end: layout.dataEnd }];
      for (const chunk of chunks) await cut(ticket, 'body', file, layout, chunk.begin, chunk.end);
    }
  }
  ticket.bytes('body', EOF_BLOCK);
}

/** CRAM: the header, the containers holding the regions' slices, and the file's own end-of-file container. */
async function cramTicket(set: ServedSet, file: ServedFile, request: TicketRequest, ticket: Ticket, layouts: FileLayouts): Promise<void> {
  const { cram, headerEnd, containerEnds, eofStart, size } = await layouts.cram(set, file);
  ticket.range('header', file, 0, headerEnd);
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
