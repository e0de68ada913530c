/**
 * Reads an access policy file (YAML, or JSON, which YAML reads too) into an AccessPolicy, checking
 * the whole of it first: every problem is one message naming the file, the line and the field. The
 * form is in docs/access.md. Keys this reader does not know are refused (a misspelt restriction would
 * otherwise grant more than meant), except keys starting with `x-`, left for other tools.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair } from 'yaml';
import { parseKeyHash, saltOfHash } from './keys.js';
import { isLevel, LEVELS, type Level } from './levels.js';
import type { AccessPolicy, DatasetRule, Grant, KeyCaching, KeyEntry, KeySource, TrustedIssuer, TrustedVisaIssuer } from './policy.js';
import { fetchableUrlProblem } from './urls.js';

/** A policy file that cannot be used: `problems` holds one message per problem, each naming its line and field. */
export class PolicyInvalid extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'PolicyInvalid';
  }
}

/** Asymmetric signature algorithms only: HMAC would let anyone holding the issuer's public key sign, and `none` is no signature. */
export const SIGNATURE_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
export const DEFAULT_ALGORITHMS = ['RS256', 'ES256'];
const DEFAULT_LEEWAY_SECONDS = 30;
const DEFAULT_KEY_CACHING: KeyCaching = { jwksCacheSeconds: 600, jwksCooldownSeconds: 30 };
const DEFAULT_GROUPS_CLAIM = 'groups';

/** A dataset's name where the policy uses it, for the check against the registry. */
export interface DatasetMention {
  name: string;
  /** `FILE:LINE: field`. */
  where: string;
}

/** The policy, with where it names each dataset (the registry check is the caller's: this reader knows no registry). */
export interface ReadPolicy {
  policy: AccessPolicy;
  mentions: DatasetMention[];
}

type Entries = Map<string, { key: Node; value: Node | null }>;

class PolicyReader {
  readonly problems: string[] = [];
  readonly mentions: DatasetMention[] = [];

  constructor(
    private readonly source: string,
    private readonly lines: LineCounter,
  ) {}

  lineOf(node: Node | null | undefined): number {
    return node?.range ? this.lines.linePos(node.range[0]).line : 1;
  }

  where(node: Node | null | undefined, field: string): string {
    return `${this.source}:${this.lineOf(node)}: ${field}`;
  }

  problem(node: Node | null | undefined, field: string, message: string): undefined {
    this.problems.push(`${this.where(node, field)}: ${message}`);
    return undefined;
  }

  /** The keys of a mapping, refusing the ones not in `known` (but `x-...`) and keys that are not strings. */
  mapping(node: Node | null, field: string, known: readonly string[]): Entries | undefined {
    if (!isMap(node)) return this.problem(node, field, 'must be a mapping');
    const entries: Entries = new Map();
    for (const pair of node.items as Array<Pair<Node, Node | null>>) {
      const key = pair.key;
      if (!isScalar(key) || typeof key.value !== 'string') {
        this.problem(key ?? node, field, 'has a key that is not a string');
        continue;
      }
      if (this.repeated(entries, key, `${field}.${key.value}`, key.value)) continue;
      if (known.includes(key.value)) entries.set(key.value, { key, value: pair.value });
      else if (!key.value.startsWith('x-')) this.problem(key, `${field}.${key.value}`, `is not a key here (known: ${known.join(', ')})`);
    }
    return entries;
  }

  /** A mapping whose keys are names (datasets), each with its value. */
  names(node: Node | null, field: string): Entries | undefined {
    if (!isMap(node)) return this.problem(node, field, 'must be a mapping of dataset names');
    const entries: Entries = new Map();
    for (const pair of node.items as Array<Pair<Node, Node | null>>) {
      const key = pair.key;
      if (!isScalar(key) || (typeof key.value !== 'string' && typeof key.value !== 'number') || String(key.value).trim() === '') {
        this.problem(key ?? node, field, 'has a name that is not a non-empty string');
        continue;
      }
      const name = String(key.value);
      if (!this.repeated(entries, key, `${field}.${name}`, name)) entries.set(name, { key, value: pair.value });
    }
    return entries;
  }

  /** True (and a problem) when `name` is a key of the mapping already. */
  private repeated(entries: Entries, key: Node, field: string, name: string): boolean {
    const first = entries.get(name);
    if (!first) return false;
    this.problem(key, field, `is named twice (first on line ${this.lineOf(first.key)})`);
    return true;
  }

  list(node: Node | null, field: string): Array<Node | null> | undefined {
    if (!isSeq(node)) return this.problem(node, field, 'must be a list');
    return node.items as Array<Node | null>;
  }

  text(node: Node | null, field: string): string | undefined {
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') return this.problem(node, field, 'must be a non-empty string');
    return node.value;
  }

  fetchableUrl(node: Node | null, field: string): string | undefined {
    const text = this.text(node, field);
    if (text === undefined) return undefined;
    const problem = fetchableUrlProblem(text);
    return problem ? this.problem(node, field, problem) : text;
  }

  level(node: Node | null, field: string): Level | undefined {
    if (isScalar(node) && isLevel(node.value)) return node.value;
    const shown = isScalar(node) ? JSON.stringify(node.value) : 'this';
    return this.problem(node, field, `${shown} is not a level (${LEVELS.join(', ')})`);
  }

  seconds(node: Node | null, field: string): number | undefined {
    if (!isScalar(node) || typeof node.value !== 'number' || !Number.isFinite(node.value) || node.value < 0) {
      return this.problem(node, field, 'must be a number of seconds, 0 or more');
    }
    return node.value;
  }

  /** One string or a list of them. */
  texts(node: Node | null, field: string): string[] | undefined {
    if (isScalar(node)) {
      const one = this.text(node, field);
      return one === undefined ? undefined : [one];
    }
    const items = this.list(node, field);
    if (!items) return undefined;
    if (items.length === 0) return this.problem(node, field, 'must name at least one');
    const out = items.map((item, i) => this.text(item, `${field}[${i}]`));
    return out.every((t) => t !== undefined) ? (out as string[]) : undefined;
  }
}

/** The `jwks:` or `discovery: true` of an issuer entry: exactly one. */
function keySourceOf(r: PolicyReader, e: Entries, node: Node, field: string): KeySource | undefined {
  const jwks = e.get('jwks');
  const discovery = e.get('discovery');
  if (jwks && discovery) return r.problem(node, field, 'names both jwks and discovery: one says where the keys are');
  if (jwks) {
    const url = r.fetchableUrl(jwks.value, `${field}.jwks`);
    return url === undefined ? undefined : { jwks: url };
  }
  if (discovery) {
    if (!isScalar(discovery.value) || discovery.value.value !== true) return r.problem(discovery.value, `${field}.discovery`, 'must be true (or give jwks: URL instead)');
    return { discovery: true };
  }
  return r.problem(node, field, 'needs jwks: URL or discovery: true (where its signing keys are published)');
}

function algorithmsOf(r: PolicyReader, e: Entries, field: string): string[] | undefined {
  const given = e.get('algorithms');
  if (!given) return DEFAULT_ALGORITHMS;
  const names = r.texts(given.value, `${field}.algorithms`);
  if (!names) return undefined;
  const refused = names.filter((a) => !SIGNATURE_ALGORITHMS.includes(a));
  if (refused.length) return r.problem(given.value, `${field}.algorithms`, `${refused.join(', ')}: not an asymmetric signature algorithm (${SIGNATURE_ALGORITHMS.join(', ')})`);
  return names;
}

function keyCachingOf(r: PolicyReader, e: Entries, field: string): KeyCaching {
  const cache = e.get('jwksCacheSeconds');
  const cooldown = e.get('jwksCooldownSeconds');
  return {
    jwksCacheSeconds: (cache && r.seconds(cache.value, `${field}.jwksCacheSeconds`)) ?? DEFAULT_KEY_CACHING.jwksCacheSeconds,
    jwksCooldownSeconds: (cooldown && r.seconds(cooldown.value, `${field}.jwksCooldownSeconds`)) ?? DEFAULT_KEY_CACHING.jwksCooldownSeconds,
  };
}

const ISSUER_KEYS = ['issuer', 'jwks', 'discovery', 'audience', 'algorithms', 'groupsClaim', 'jwksCacheSeconds', 'jwksCooldownSeconds'];
const VISA_ISSUER_KEYS = ['issuer', 'jwks', 'discovery', 'algorithms', 'jwksCacheSeconds', 'jwksCooldownSeconds'];

/** The entries of `issuers:` or `visas:`, each issuer once. */
function issuerList<T>(
  r: PolicyReader,
  node: Node | null,
  field: string,
  known: readonly string[],
  read: (item: Node, e: Entries, field: string, issuer: string) => T | undefined,
): T[] {
  const items = r.list(node, field) ?? [];
  const seen = new Map<string, number>();
  const out: T[] = [];
  items.forEach((item, i) => {
    const at = `${field}[${i}]`;
    const e = r.mapping(item, at, known);
    if (!e || !item) return;
    const issuerNode = e.get('issuer');
    const issuer = issuerNode ? r.fetchableUrl(issuerNode.value, `${at}.issuer`) : r.problem(item, `${at}.issuer`, 'missing (the tokens\' iss, exactly)');
    if (issuer === undefined) return;
    const earlier = seen.get(issuer);
    if (earlier !== undefined) r.problem(issuerNode!.value, `${at}.issuer`, `${issuer} is already ${field}[${earlier}]`);
    seen.set(issuer, i);
    const entry = read(item, e, at, issuer);
    if (entry !== undefined) out.push(entry);
  });
  return out;
}

function trustedIssuer(r: PolicyReader, item: Node, e: Entries, field: string, issuer: string): TrustedIssuer | undefined {
  const keys = keySourceOf(r, e, item, field);
  const audienceNode = e.get('audience');
  const audience = audienceNode
    ? r.texts(audienceNode.value, `${field}.audience`)
    : r.problem(item, `${field}.audience`, 'missing: the audience its tokens must name (a token for another service is refused)');
  const algorithms = algorithmsOf(r, e, field);
  const groupsNode = e.get('groupsClaim');
  const groupsClaim = groupsNode ? r.text(groupsNode.value, `${field}.groupsClaim`) : DEFAULT_GROUPS_CLAIM;
  if (!keys || !audience || !algorithms || !groupsClaim) return undefined;
  return { issuer, keys, audience, algorithms, groupsClaim, ...keyCachingOf(r, e, field) };
}

function trustedVisaIssuer(r: PolicyReader, item: Node, e: Entries, field: string, issuer: string): TrustedVisaIssuer | undefined {
  const keys = keySourceOf(r, e, item, field);
  const algorithms = algorithmsOf(r, e, field);
  if (!keys || !algorithms) return undefined;
  return { issuer, keys, algorithms, ...keyCachingOf(r, e, field) };
}

const GRANT_KEYS = ['issuer', 'subject', 'group', 'visa', 'level'];

function grantOf(r: PolicyReader, node: Node | null, field: string, issuers: ReadonlySet<string>, datasetUrl: string | undefined): Grant | undefined {
  const e = r.mapping(node, field, GRANT_KEYS);
  if (!e || !node) return undefined;
  const levelNode = e.get('level');
  const level = levelNode ? r.level(levelNode.value, `${field}.level`) : r.problem(node, `${field}.level`, 'missing: the level the grant gives');
  const kinds = (['subject', 'group', 'visa'] as const).filter((k) => e.has(k));
  if (kinds.length !== 1) {
    return r.problem(node, field, kinds.length ? `names ${kinds.join(' and ')}: a grant names one of them` : 'names no subject (with its issuer), group or visa: true');
  }
  const issuerNode = e.get('issuer');
  let issuer: string | undefined;
  if (issuerNode) {
    issuer = r.text(issuerNode.value, `${field}.issuer`);
    if (issuer !== undefined && !issuers.has(issuer)) return r.problem(issuerNode.value, `${field}.issuer`, `${issuer} is not one of issuers:`);
  }
  if (level === undefined) return undefined;
  switch (kinds[0]) {
    case 'subject': {
      const subject = r.text(e.get('subject')!.value, `${field}.subject`);
      if (!issuerNode) return r.problem(node, `${field}.issuer`, 'missing: a subject is granted only with its issuer, never a bare user name');
      return subject === undefined || issuer === undefined ? undefined : { kind: 'identity', issuer, subject, level };
    }
    case 'group': {
      const group = r.text(e.get('group')!.value, `${field}.group`);
      if (issuerNode && issuer === undefined) return undefined;
      return group === undefined ? undefined : { kind: 'group', group, ...(issuer === undefined ? {} : { issuer }), level };
    }
    case 'visa': {
      const visa = e.get('visa')!.value;
      if (!isScalar(visa) || visa.value !== true) return r.problem(visa, `${field}.visa`, 'must be true');
      if (issuerNode) return r.problem(issuerNode.value, `${field}.issuer`, 'a visa grant names no issuer: visas: lists whose visas are trusted');
      if (datasetUrl === undefined) return r.problem(node, field, 'a visa grant needs the dataset\'s url: (what a ControlledAccessGrants visa\'s value names)');
      return { kind: 'visa', level };
    }
  }
}

const DATASET_KEYS = ['anonymous', 'authenticated', 'url', 'grants'];

/** A dataset's rule, or the default one (`grantsAllowed` false: no url, no grants). */
function ruleOf(r: PolicyReader, node: Node | null, field: string, issuers: ReadonlySet<string>, grantsAllowed: boolean): DatasetRule | undefined {
  const e = r.mapping(node, field, grantsAllowed ? DATASET_KEYS : ['anonymous', 'authenticated']);
  if (!e) return undefined;
  const anonymousNode = e.get('anonymous');
  const authenticatedNode = e.get('authenticated');
  const anonymous = anonymousNode ? r.level(anonymousNode.value, `${field}.anonymous`) : 'none';
  const authenticated = authenticatedNode ? r.level(authenticatedNode.value, `${field}.authenticated`) : anonymous;
  if (anonymous && authenticated && LEVELS.indexOf(authenticated) < LEVELS.indexOf(anonymous)) {
    r.problem(authenticatedNode!.value, `${field}.authenticated`, `${authenticated} is below anonymous (${anonymous}): an authenticated caller has at least what an anonymous one has`);
  }
  const urlNode = e.get('url');
  let url: string | undefined;
  if (urlNode) {
    url = r.text(urlNode.value, `${field}.url`);
    if (url !== undefined && !/^[a-z][a-z0-9+.-]*:\S+$/i.test(url)) url = r.problem(urlNode.value, `${field}.url`, `${JSON.stringify(url)} is not an absolute URL`);
  }
  const grantsNode = e.get('grants');
  const grants = grantsNode ? (r.list(grantsNode.value, `${field}.grants`) ?? []).map((g, i) => grantOf(r, g, `${field}.grants[${i}]`, issuers, url)) : [];
  if (!anonymous || !authenticated || grants.some((g) => g === undefined) || (urlNode && url === undefined)) return undefined;
  return { anonymous, authenticated, ...(url === undefined ? {} : { url }), grants: grants as Grant[] };
}

const KEY_ENTRY_KEYS = ['name', 'hash', 'datasets'];
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;

function keyEntries(r: PolicyReader, node: Node | null): KeyEntry[] {
  const out: KeyEntry[] = [];
  const names = new Map<string, number>();
  const salts = new Map<string, string>();
  (r.list(node, 'keys') ?? []).forEach((item, i) => {
    const field = `keys[${i}]`;
    const e = r.mapping(item, field, KEY_ENTRY_KEYS);
    if (!e || !item) return;
    const nameNode = e.get('name');
    let name = nameNode ? r.text(nameNode.value, `${field}.name`) : r.problem(item, `${field}.name`, 'missing: the name access logs give the key');
    if (name !== undefined && !KEY_NAME.test(name)) name = r.problem(nameNode!.value, `${field}.name`, `${JSON.stringify(name)}: a key's name is letters, digits and . _ @ - (not first)`);
    if (name !== undefined && names.has(name)) name = r.problem(nameNode!.value, `${field}.name`, `${name} is already keys[${names.get(name)}]`);
    if (name !== undefined) names.set(name, i);
    const hashNode = e.get('hash');
    let hash = hashNode ? r.text(hashNode.value, `${field}.hash`) : r.problem(item, `${field}.hash`, 'missing: the hash ga4gh access add-key prints');
    if (hash !== undefined) {
      try {
        parseKeyHash(hash);
        const salt = saltOfHash(hash);
        if (salts.has(salt)) hash = r.problem(hashNode!.value, `${field}.hash`, `is the hash of key ${salts.get(salt)} too: make a new key with ga4gh access add-key`);
        else salts.set(salt, name ?? field);
      } catch (e) {
        hash = r.problem(hashNode!.value, `${field}.hash`, (e as Error).message);
      }
    }
    const datasetsNode = e.get('datasets');
    const datasets = new Map<string, Level>();
    if (!datasetsNode) r.problem(item, `${field}.datasets`, 'missing: the level the key gives for each dataset');
    else {
      for (const [dataset, { key, value }] of r.names(datasetsNode.value, `${field}.datasets`) ?? []) {
        const level = r.level(value, `${field}.datasets.${dataset}`);
        r.mentions.push({ name: dataset, where: r.where(key, `${field}.datasets.${dataset}`) });
        if (level) datasets.set(dataset, level);
      }
    }
    if (name !== undefined && hash !== undefined) out.push({ name, hash, datasets });
  });
  return out;
}

const TOP_KEYS = ['issuers', 'visas', 'datasets', 'default', 'keys', 'leewaySeconds'];

/** Reads and checks a whole policy file's text; throws PolicyInvalid naming every problem. `source` names the file in messages. */
export function readPolicy(text: string, source: string): ReadPolicy {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false });
  if (doc.errors.length) {
    throw new PolicyInvalid(doc.errors.map((e) => `${source}:${e.linePos?.[0].line ?? lines.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}`));
  }
  const r = new PolicyReader(source, lines);
  const root = doc.contents as Node | null;
  if (root === null || (isScalar(root) && root.value === null)) throw new PolicyInvalid([`${source}:1: the policy is empty`]);
  const top = r.mapping(root, 'the policy', TOP_KEYS);
  if (!top) throw new PolicyInvalid(r.problems);

  const issuers = top.has('issuers') ? issuerList(r, top.get('issuers')!.value, 'issuers', ISSUER_KEYS, (item, e, f, iss) => trustedIssuer(r, item, e, f, iss)) : [];
  const visaIssuers = top.has('visas') ? issuerList(r, top.get('visas')!.value, 'visas', VISA_ISSUER_KEYS, (item, e, f, iss) => trustedVisaIssuer(r, item, e, f, iss)) : [];
  const issuerNames = new Set(issuers.map((i) => i.issuer));

  const datasets = new Map<string, DatasetRule>();
  const urls = new Map<string, string>();
  const datasetsNode = top.get('datasets');
  for (const [name, { key, value }] of datasetsNode ? (r.names(datasetsNode.value, 'datasets') ?? []) : []) {
    const field = `datasets.${name}`;
    r.mentions.push({ name, where: r.where(key, field) });
    const rule = ruleOf(r, value, field, issuerNames, true);
    if (!rule) continue;
    if (rule.url !== undefined) {
      const other = urls.get(rule.url);
      if (other !== undefined) r.problem(value, `${field}.url`, `${rule.url} is the url of dataset ${other} too: a visa for one would open both`);
      urls.set(rule.url, name);
    }
    if (rule.grants.some((g) => g.kind === 'visa') && visaIssuers.length === 0) r.problem(value, `${field}.grants`, 'a visa grant needs visas: (whose visas are trusted)');
    datasets.set(name, rule);
  }

  const defaultNode = top.get('default');
  const defaultRule = defaultNode ? ruleOf(r, defaultNode.value, 'default', issuerNames, false) : { anonymous: 'none' as const, authenticated: 'none' as const, grants: [] };
  const keys = top.has('keys') ? keyEntries(r, top.get('keys')!.value) : [];
  const leewayNode = top.get('leewaySeconds');
  const leewaySeconds = leewayNode ? r.seconds(leewayNode.value, 'leewaySeconds') : DEFAULT_LEEWAY_SECONDS;

  if (r.problems.length || !defaultRule || leewaySeconds === undefined) throw new PolicyInvalid(r.problems);
  return { policy: { source, issuers, visaIssuers, datasets, defaultRule, keys, leewaySeconds }, mentions: r.mentions };
}
