/**
 * The sequences a file's header declares (SAM `@SQ`, VCF `##contig`, the contig dictionary of a
 * BCF), in header order: what two encodings of the same records must agree on.
 */
export interface HeaderSequence {
  name: string;
  length?: number;
  md5?: string;
}

const describe = (s: HeaderSequence | undefined) => (s === undefined ? '(none)' : s.length === undefined ? `'${s.name}'` : `'${s.name}' (length ${s.length})`);

/**
 * How two headers' sequences differ, at the first place they do (undefined when they agree): the same
 * names in the same order, with the same lengths and MD5s wherever both headers give them.
 */
export function sequenceDifference(ours: HeaderSequence[], theirs: HeaderSequence[]): string | undefined {
  for (let i = 0; i < Math.max(ours.length, theirs.length); i++) {
    const a = ours[i];
    const b = theirs[i];
    const same =
      a !== undefined &&
      b !== undefined &&
      a.name === b.name &&
      (a.length === undefined || b.length === undefined || a.length === b.length) &&
      (a.md5 === undefined || b.md5 === undefined || a.md5.toLowerCase() === b.md5.toLowerCase());
    if (!same) {
      const md5s = a && b && a.name === b.name && a.length === b.length ? ` with MD5 ${a.md5} and ${b.md5}` : '';
      return `sequence ${i + 1} is ${describe(a)} in one and ${describe(b)} in the other${md5s}`;
    }
  }
  return undefined;
}
