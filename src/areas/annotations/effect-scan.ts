/**
 * The effect names an annotation set's VCF files hold, for `repo check --deep`: the registry keeps
 * none (annotations are read from the files on each request), so every record is read again, after
 * the variants area's own deep check of the same files, and its entries parsed by the reader that
 * serves them.
 */
import { openFile } from '../../files.js';
import type { Registry } from '../../registry/registry.js';
import type { CheckOptions } from '../area.js';
import { inflateLines } from '../../formats/bgzf.js';
import { everyBcfLine, OpenBcf } from '../variants/bcf-files.js';
import { listVariantSetFiles } from '../variants/store.js';
import { AnnotationReader, fixedColumns } from './entries.js';
import { annotationSetId } from './service.js';
import type { AnnotationSetRow } from './store.js';

/** Every distinct effect name of the set's records, sorted. */
export async function effectNamesIn(registry: Registry, row: AnnotationSetRow, options: CheckOptions): Promise<string[]> {
  const reader = new AnnotationReader(
    { field: row.info_field, columns: JSON.parse(row.columns) as string[] },
    { datasetName: row.dataset_name, setName: row.name, annotationSetId: annotationSetId(row.dataset_name, row.name) },
    (term) => ({ term }),
  );
  const names = new Set<string>();
  for (const file of await listVariantSetFiles(registry, row.dataset_name, row.name)) {
    const onLine = (bytes: Buffer, from: number, to: number) => {
      if (to === from || bytes[from] === 35 /* # */) return;
      for (const name of reader.effectNames(fixedColumns(bytes, from, to))) names.add(name);
    };
    const progress = (read: number, size: number) => options.progress(file.path, read, size);
    try {
      if (file.format === 'BCF') {
        const bcf = new OpenBcf({ path: file.path, indexPath: file.index_path, indexKind: file.index_kind });
        await everyBcfLine(bcf, [], (bytes, from, to) => onLine(bytes, from, to), progress);
      } else await inflateLines(openFile(file.path), file.path, onLine, progress);
    } catch {
      // A damaged file is a problem line of the variants area's check; the names read before the damage still count.
    }
  }
  return [...names].sort();
}
