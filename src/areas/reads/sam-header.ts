/** The parts of a SAM header text the reads area uses: sort order, references, read groups, programs. */

export interface SamHeader {
  sortOrder?: string;
  references: Array<{ name: string; length?: number; md5?: string }>;
  /** Each @RG line's tags, in header order (ID first among them when present). */
  readGroups: Array<Record<string, string>>;
  programs: Array<Record<string, string>>;
}

function tagsOf(fields: string[]): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    if (colon !== 2) continue;
    const key = field.slice(0, 2);
    if (!(key in tags)) tags[key] = field.slice(3);
  }
  return tags;
}

export function parseSamHeader(text: string): SamHeader {
  const header: SamHeader = { references: [], readGroups: [], programs: [] };
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith('@')) continue;
    const [kind, ...fields] = line.split('\t');
    const tags = tagsOf(fields);
    switch (kind) {
      case '@HD':
        header.sortOrder = tags.SO;
        break;
      case '@SQ':
        if (tags.SN !== undefined) {
          const length = Number(tags.LN);
          header.references.push({ name: tags.SN, length: Number.isSafeInteger(length) ? length : undefined, md5: tags.M5?.toLowerCase() });
        }
        break;
      case '@RG':
        if (tags.ID !== undefined) header.readGroups.push(tags);
        break;
      case '@PG':
        header.programs.push(tags);
        break;
    }
  }
  return header;
}
