/**
 * Reads Turtle files once, at load, with n3's streaming parser into a plain subject -> predicate ->
 * objects index (duplicated statements kept once, document order kept). Only the loader uses it: the
 * server never holds a graph or runs a query language; what it serves is stored as records.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { StreamParser, type Quad } from 'n3';
import { UserError } from '../../user-error.js';

export interface RdfNode {
  kind: 'iri' | 'blank' | 'literal';
  value: string;
}

export class Graph {
  private readonly bySubject = new Map<string, Map<string, RdfNode[]>>();
  private readonly seen = new Set<string>();
  /** Prefix name -> namespace, from every file (the first file to declare a name wins). */
  readonly prefixes = new Map<string, string>();

  add(subject: string, predicate: string, object: RdfNode): void {
    const key = `${subject}\u0000${predicate}\u0000${object.kind}\u0000${object.value}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    let predicates = this.bySubject.get(subject);
    if (!predicates) this.bySubject.set(subject, (predicates = new Map()));
    const objects = predicates.get(predicate);
    if (objects) objects.push(object);
    else predicates.set(predicate, [object]);
  }

  objects(subject: string, predicate: string): RdfNode[] {
    return this.bySubject.get(subject)?.get(predicate) ?? [];
  }

  first(subject: string, predicate: string): RdfNode | undefined {
    return this.objects(subject, predicate)[0];
  }

  predicates(subject: string): Map<string, RdfNode[]> {
    return this.bySubject.get(subject) ?? new Map();
  }

  /** Subjects that have some statement with `predicate`, in the order they were first seen. */
  subjectsWithPredicate(predicate: string): string[] {
    return [...this.bySubject].filter(([, predicates]) => predicates.has(predicate)).map(([subject]) => subject);
  }

  /** Subjects with `rdf:type` `type`, in the order they were first seen. */
  subjectsOfType(type: string): string[] {
    const found: string[] = [];
    for (const [subject, predicates] of this.bySubject) {
      if (predicates.get(RDF_TYPE)?.some((o) => o.kind === 'iri' && o.value === type)) found.push(subject);
    }
    return found;
  }
}

export const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';

/** Subjects and objects that are blank nodes are keyed `_:label` (labels unique per load). */
function nodeOf(term: Quad['object']): RdfNode {
  if (term.termType === 'Literal') return { kind: 'literal', value: term.value };
  if (term.termType === 'BlankNode') return { kind: 'blank', value: '_:' + term.value };
  return { kind: 'iri', value: term.value };
}

/** The Turtle files a PATH names: the file itself, or the `.ttl` files of a folder in name order. */
export async function turtleFiles(location: string): Promise<string[]> {
  let stat;
  try {
    stat = await fs.stat(location);
  } catch {
    throw new UserError(`no such file or folder: ${location}`);
  }
  if (!stat.isDirectory()) return [location];
  const names = (await fs.readdir(location)).filter((n) => n.endsWith('.ttl')).sort();
  if (names.length === 0) throw new UserError(`${location}: no .ttl files in this folder`);
  return names.map((n) => path.join(location, n));
}

/** Parses every file into one graph; a syntax error is a UserError naming the file and line. */
export async function readTurtle(files: string[]): Promise<Graph> {
  const graph = new Graph();
  for (const [index, file] of files.entries()) {
    // Blank node labels are made unique per file, so `_:a` in two files stays two nodes.
    const parser = new StreamParser({ format: 'text/turtle', blankNodePrefix: `f${index}_` });
    await new Promise<void>((resolve, reject) => {
      const input = createReadStream(file);
      input.on('error', (e) => reject(new UserError(`cannot read ${file}: ${e.message}`)));
      parser.on('data', (quad: Quad) => {
        const subject = quad.subject.termType === 'BlankNode' ? '_:' + quad.subject.value : quad.subject.value;
        graph.add(subject, quad.predicate.value, nodeOf(quad.object));
      });
      parser.on('prefix', (name: string, namespace: { value: string } | string) => {
        const iri = typeof namespace === 'string' ? namespace : namespace.value;
        if (!graph.prefixes.has(name)) graph.prefixes.set(name, iri);
      });
      parser.on('error', (e: Error) => {
        input.destroy();
        reject(new UserError(`${file}: not valid Turtle: ${e.message.replace(/\.$/, '')}`));
      });
      parser.on('end', () => resolve());
      input.pipe(parser);
    });
  }
  return graph;
}
