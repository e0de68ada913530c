/**
 * Term ids as served: OBO PURLs as their usual CURIEs (`http://purl.obolibrary.org/obo/SO_0001059` ->
 * `SO:0001059`), other IRIs by the Turtle file's own prefixes (`DrugBank:DB00619`), and the IRI itself
 * when no prefix covers it. Query terms are read the same way, so a client may send a CURIE, the
 * file's own prefixed form or the full IRI.
 */
const OBO_PURL = /^http:\/\/purl\.obolibrary\.org\/obo\/([A-Za-z][A-Za-z0-9]*)_([^/#?]+)$/;
const LOCAL_NAME = /^[A-Za-z0-9_.-]+$/;

export class Curies {
  /** Namespaces longest first, so the most specific prefix wins. */
  private readonly namespaces: Array<[string, string]>;

  constructor(private readonly prefixes: Record<string, string>) {
    this.namespaces = Object.entries(prefixes)
      .filter(([name, ns]) => name !== '' && ns !== '')
      .sort((a, b) => b[1].length - a[1].length);
  }

  toCurie(iri: string): string {
    const obo = OBO_PURL.exec(iri);
    if (obo) return `${obo[1]}:${obo[2]}`;
    for (const [name, ns] of this.namespaces) {
      if (iri.startsWith(ns)) {
        const local = iri.slice(ns.length);
        if (local && LOCAL_NAME.test(local)) return `${name}:${local}`;
      }
    }
    return iri;
  }

  /** The local part of a CURIE of the file's own prefixes (`CGD:sensitivity` -> `sensitivity`); any other id as it stands. */
  localName(id: string): string {
    const colon = id.indexOf(':');
    return colon > 0 && Object.hasOwn(this.prefixes, id.slice(0, colon)) ? id.slice(colon + 1) : id;
  }

  /** A client's term id in the form the records use. */
  normalize(id: string): string {
    const trimmed = id.trim();
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) return this.toCurie(trimmed);
    const colon = trimmed.indexOf(':');
    if (colon > 0) {
      const ns = this.prefixes[trimmed.slice(0, colon)];
      if (ns !== undefined && ns !== '') return this.toCurie(ns + trimmed.slice(colon + 1));
    }
    return trimmed;
  }
}
