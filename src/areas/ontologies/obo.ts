/**
 * A streaming reader of OBO 1.2/1.4 ontology files (the Sequence Ontology's `so-xp-simple.obo`): the
 * `[Term]` stanzas' ids, names, exact synonyms, `is_a` parents and obsolete flags. Other stanza kinds
 * (`[Typedef]`, `[Instance]`) and other tags are skipped: nothing served needs them.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { UserError } from '../../user-error.js';

export interface OboTerm {
  id: string;
  name: string;
  /** `is_a` parents, ids only (the `! label` comment dropped). */
  parents: string[];
  /** EXACT synonyms: GFF3 files sometimes name a type by one of them. */
  synonyms: string[];
  obsolete: boolean;
}

/**
 * Reads every term of `file`; refuses a file that is not OBO, naming the line. The header's tags
 * (`data-version`, `ontology`, ...) are put in `header` as they are read.
 */
export async function* readOboTerms(file: string, header: Record<string, string> = {}): AsyncGenerator<OboTerm> {
  const input = createReadStream(file);
  const text = file.endsWith('.gz') ? input.pipe(createGunzip()) : input;
  const lines = createInterface({ input: text, crlfDelay: Infinity });
  let term: OboTerm | undefined;
  let inTerm = false;
  let lineNumber = 0;
  let sawStanza = false;
  const finish = (): OboTerm | undefined => {
    const done = term;
    term = undefined;
    if (done && !done.id) throw new UserError(`${file}: a [Term] stanza before line ${lineNumber} has no id`);
    return done;
  };
  try {
    for await (const raw of lines) {
      lineNumber++;
      const line = raw.trim();
      if (!line || line.startsWith('!')) continue;
      if (line.startsWith('[')) {
        if (!line.endsWith(']')) throw new UserError(`${file} line ${lineNumber}: not an OBO stanza header: ${clip(line)}`);
        const done = finish();
        if (done) yield done;
        sawStanza = true;
        inTerm = line === '[Term]';
        if (inTerm) term = { id: '', name: '', parents: [], synonyms: [], obsolete: false };
        continue;
      }
      const colon = line.indexOf(':');
      if (colon <= 0) throw new UserError(`${file} line ${lineNumber}: not an OBO tag-value line: ${clip(line)}`);
      const tag = line.slice(0, colon);
      const value = withoutComment(line.slice(colon + 1).trim());
      if (!sawStanza) header[tag] ??= value;
      if (!inTerm || !term) continue; // header tags and other stanza kinds
      if (tag === 'id') term.id = value;
      else if (tag === 'name') term.name = value;
      else if (tag === 'is_a') term.parents.push(value.split(/\s/)[0]);
      else if (tag === 'is_obsolete') term.obsolete = value === 'true';
      else if (tag === 'synonym') {
        const exact = /^"((?:[^"\\]|\\.)*)"\s+EXACT\b/.exec(value);
        if (exact) term.synonyms.push(exact[1].replace(/\\(.)/g, '$1'));
      }
    }
    const done = finish();
    if (done) yield done;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError(`no such file: ${file}`);
    if ((e as NodeJS.ErrnoException).code === 'Z_DATA_ERROR') throw new UserError(`${file}: not a gzip file`);
    throw e;
  }
  if (!sawStanza) throw new UserError(`${file}: no OBO stanzas found; is this an OBO ontology file?`);
}

/** Drops a trailing `! comment` (OBO writes a term's label after its id this way). */
function withoutComment(value: string): string {
  if (value.startsWith('"')) return value; // quoted text may hold '!'
  const bang = value.indexOf(' !');
  return bang >= 0 ? value.slice(0, bang).trim() : value;
}

const clip = (line: string) => (line.length > 60 ? line.slice(0, 60) + '...' : line);
