/**
 * GA4GH Passport visas (Passport specification 1.2): each visa JWT verified against its own trusted
 * visa issuer (`visas:` of the policy), its `ga4gh_visa_v1` object read, and its `conditions`
 * evaluated against the other visas of the same passport. A visa that fails any check does not count
 * (the specification has a clearinghouse ignore such visas); the reason is kept for the log.
 */
import type { JWTPayload } from 'jose';
import { loggable, type VerifiedVisa } from './callers.js';
import type { AccessPolicy, TrustedVisaIssuer } from './policy.js';
import { CredentialsRefused, headerOf, KeySets, KeysUnavailable, looksLikeJwt, unverifiedPayloadOf, verifyWithIssuer } from './tokens.js';

/** More visas than this in one passport is refused whole: verifying each costs a signature check. */
export const MAX_VISAS = 200;

const LINKED_IDENTITIES = 'LinkedIdentities';
/** The claims of a visa object a condition clause may compare (string claims; never `asserted` or `conditions`). */
const CONDITION_CLAIMS = ['value', 'source', 'by'] as const;
type ConditionClaim = (typeof CONDITION_CLAIMS)[number];

interface ConditionClause {
  type: string;
  matches: Array<{ claim: ConditionClaim; kind: 'const' | 'pattern' | 'split_pattern'; text: string }>;
}

/** A verified visa with the conditions it still has to meet (a disjunction of conjunctions of clauses). */
interface CheckedVisa extends VerifiedVisa {
  conditions: ConditionClause[][];
}

export interface PassportVisas {
  /** The visas that count: verified, unexpired, asserted in the past, their conditions met. */
  visas: VerifiedVisa[];
  /** Why each other visa does not count (for the log; holds no token). */
  ignored: string[];
}

/** Reads `conditions`; a string says which part is malformed or unknown, and the visa does not count. */
function conditionsOf(raw: unknown): ConditionClause[][] | string {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) return 'its conditions are not a list';
  const out: ConditionClause[][] = [];
  for (const alternative of raw) {
    if (!Array.isArray(alternative) || alternative.length === 0) return 'its conditions hold an alternative that is not a non-empty list';
    const clauses: ConditionClause[] = [];
    for (const clause of alternative) {
      if (typeof clause !== 'object' || clause === null || Array.isArray(clause)) return 'its conditions hold a clause that is not an object';
      const { type, ...claims } = clause as Record<string, unknown>;
      if (typeof type !== 'string' || !type) return 'a condition clause names no type';
      const matches: ConditionClause['matches'] = [];
      for (const [claim, value] of Object.entries(claims)) {
        if (!(CONDITION_CLAIMS as readonly string[]).includes(claim)) return `a condition clause compares ${loggable(claim)}, which it may not`;
        const m = typeof value === 'string' ? /^(const|pattern|split_pattern):([\s\S]*)$/.exec(value) : null;
        if (!m) return `a condition clause's ${claim} has an unknown match type`;
        matches.push({ claim: claim as ConditionClaim, kind: m[1] as 'const' | 'pattern' | 'split_pattern', text: m[2] });
      }
      if (matches.length === 0) return 'a condition clause compares no claim';
      clauses.push({ type, matches });
    }
    out.push(clauses);
  }
  return out;
}

/**
 * Full-string pattern matching of the specification: `?` any one character, `*` any run of them, no
 * escapes. Iterative with one backtrack point, so a pattern cannot make it exponential.
 */
export function patternMatches(pattern: string, text: string): boolean {
  const p = [...pattern];
  const t = [...text];
  let pi = 0;
  let ti = 0;
  let star = -1;
  let starText = 0;
  while (ti < t.length) {
    if (pi < p.length && (p[pi] === '?' || (p[pi] !== '*' && p[pi] === t[ti]))) {
      pi++;
      ti++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      starText = ti;
    } else if (star >= 0) {
      pi = star + 1;
      ti = ++starText;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

function claimMatches(match: ConditionClause['matches'][number], visa: VerifiedVisa): boolean {
  const value = visa[match.claim];
  if (value === undefined) return false;
  switch (match.kind) {
    case 'const':
      return value === match.text;
    case 'pattern':
      return patternMatches(match.text, value);
    case 'split_pattern':
      return value.split(';').some((part) => patternMatches(match.text, part));
  }
}

const identityOf = (v: { issuer: string; subject: string }) => `${v.subject}\u0000${v.issuer}`;

/**
 * Which visa identities (issuer and subject) are the same person: a trusted LinkedIdentities visa
 * links its own identity with each it lists (`sub,iss` pairs, URL-encoded, separated by `;`).
 */
function linkedIdentities(visas: readonly VerifiedVisa[]): (a: VerifiedVisa, b: VerifiedVisa) => boolean {
  const parent = new Map<string, string>();
  const root = (id: string): string => {
    let at = id;
    while (parent.has(at) && parent.get(at) !== at) at = parent.get(at)!;
    return at;
  };
  for (const visa of visas) {
    if (visa.type !== LINKED_IDENTITIES) continue;
    for (const pair of visa.value.split(';')) {
      const [subject, issuer, extra] = pair.split(',');
      if (subject === undefined || issuer === undefined || extra !== undefined) continue;
      try {
        const other = identityOf({ subject: decodeURIComponent(subject), issuer: decodeURIComponent(issuer) });
        const [a, b] = [root(identityOf(visa)), root(other)];
        if (a !== b) parent.set(a, b);
      } catch {
        // A malformed escape links nothing.
      }
    }
  }
  return (a, b) => root(identityOf(a)) === root(identityOf(b));
}

/** Checks a visa's `ga4gh_visa_v1` object; a string says why it does not count. */
function visaObjectOf(payload: JWTPayload, nowSeconds: number, leewaySeconds: number): CheckedVisa | string {
  if (typeof payload.sub !== 'string' || payload.sub === '') return 'its sub is not a string';
  const object = payload.ga4gh_visa_v1 as Record<string, unknown> | undefined;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return 'it holds no ga4gh_visa_v1 object';
  const { type, asserted, value, source, by } = object;
  if (typeof type !== 'string' || !type) return 'its type is not a string';
  if (typeof asserted !== 'number' || !Number.isFinite(asserted)) return 'its asserted is not a number of seconds';
  if (asserted > nowSeconds + leewaySeconds) return 'it is asserted in the future';
  if (typeof value !== 'string') return 'its value is not a string';
  if (typeof source !== 'string' || !source) return 'its source is not a string';
  if (by !== undefined && typeof by !== 'string') return 'its by is not a string';
  const conditions = conditionsOf(object.conditions);
  if (typeof conditions === 'string') return conditions;
  return {
    issuer: payload.iss!,
    subject: payload.sub!,
    type,
    asserted,
    value,
    source,
    ...(by === undefined ? {} : { by }),
    expiresAt: payload.exp!,
    conditions,
  };
}

/** Verifies one visa JWT with its own trusted issuer; a string says why it does not count. */
async function checkVisa(jwt: string, visaIssuers: readonly TrustedVisaIssuer[], keySets: KeySets, leewaySeconds: number): Promise<CheckedVisa | string> {
  try {
    const header = headerOf(jwt, 'visa');
    const iss = unverifiedPayloadOf(jwt, 'visa').iss;
    const issuer = visaIssuers.find((i) => i.issuer === iss);
    if (!issuer) return typeof iss === 'string' ? `its issuer ${loggable(iss)} is not a trusted visa issuer` : 'it names no issuer';
    // A visa may say where its keys are (jku); only the issuer's own configured JWKS is believed.
    if (header.jku !== undefined && header.jku !== (await keySets.jwksUrlOf(issuer))) return `its jku ${loggable(String(header.jku))} is not the JWKS of ${issuer.issuer}`;
    const payload = await verifyWithIssuer(jwt, header, issuer, keySets, 'visa', { required: ['iss', 'sub', 'iat', 'exp'], leewaySeconds });
    return visaObjectOf(payload, Date.now() / 1000, leewaySeconds);
  } catch (e) {
    if (e instanceof CredentialsRefused) return e.reason;
    if (e instanceof KeysUnavailable) return e.message;
    throw e;
  }
}

/**
 * Verifies the visas of a passport (the list of its `ga4gh_passport_v1` claim, or a list given as
 * such), and returns those that count, conditions evaluated: a clause is met by another counting
 * visa without conditions, of the clause's type, each compared claim matching, whose identity is the
 * same person's (the same issuer and subject, or linked by a LinkedIdentities visa).
 */
export async function verifyVisas(jwts: readonly unknown[], policy: AccessPolicy, keySets: KeySets): Promise<PassportVisas> {
  if (jwts.length > MAX_VISAS) throw new CredentialsRefused(`the passport holds ${jwts.length} visas, more than the ${MAX_VISAS} accepted`);
  const ignored: string[] = [];
  const checked: Array<CheckedVisa & { index: number }> = [];
  const results = await Promise.all(
    jwts.map((jwt) => (typeof jwt === 'string' ? checkVisa(jwt, policy.visaIssuers, keySets, policy.leewaySeconds) : Promise.resolve('it is not a JWT string'))),
  );
  results.forEach((result, index) => {
    if (typeof result === 'string') ignored.push(`visa ${index}: ${result}`);
    else checked.push({ ...result, index });
  });
  const unconditional = checked.filter((v) => v.conditions.length === 0);
  const samePerson = linkedIdentities(unconditional);
  const met = (visa: CheckedVisa) =>
    visa.conditions.some((alternative) =>
      alternative.every((clause) => unconditional.some((other) => other.type === clause.type && samePerson(visa, other) && clause.matches.every((m) => claimMatches(m, other)))),
    );
  const visas: VerifiedVisa[] = [];
  for (const { index, conditions, ...visa } of checked) {
    if (conditions.length && !met({ ...visa, conditions })) ignored.push(`visa ${index}: its conditions are not met`);
    else visas.push(visa);
  }
  return { visas, ignored };
}

/** The visa JWTs of a passport JWT's payload (already verified as an access token), refusing a claim of the wrong shape. */
export function visasInPassport(payload: JWTPayload): unknown[] {
  const claim = payload.ga4gh_passport_v1;
  if (claim === undefined) return [];
  if (!Array.isArray(claim)) throw new CredentialsRefused('the token\'s ga4gh_passport_v1 claim is not a list of visas');
  return claim;
}

/**
 * The forms a list of visas is given in beside a token (the `GA4GH-Passport` header): a JSON list of
 * visa JWTs, the JSON object `/userinfo` answers (`{"ga4gh_passport_v1": [...]}`), or visa JWTs
 * separated by commas. A passport JWT is given as one JWT: `passport` is set.
 */
export function passportGiven(text: string): { passport: string } | { visas: unknown[] } {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new CredentialsRefused('the passport header is not valid JSON');
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { ga4gh_passport_v1?: unknown } | null)?.ga4gh_passport_v1;
    if (!Array.isArray(list)) throw new CredentialsRefused('the passport header is no list of visas');
    return { visas: list };
  }
  const parts = trimmed.split(',').map((p) => p.trim());
  if (!parts.every(looksLikeJwt)) throw new CredentialsRefused('the passport header is not a passport JWT or a list of visa JWTs');
  if (parts.length === 1 && unverifiedPayloadOf(parts[0], 'passport').ga4gh_passport_v1 !== undefined) return { passport: parts[0] };
  return { visas: parts };
}
