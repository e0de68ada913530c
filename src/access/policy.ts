/**
 * An access policy as the server holds it once its file is read and validated (policy-file.ts), and
 * the one pure function that says what level it gives a caller for a dataset.
 */
import type { Caller } from './callers.js';
import { highest, OPEN_LEVEL, type Level } from './levels.js';

/** Where an issuer's signing keys are published. */
export type KeySource = { jwks: string } | { discovery: true };

/** How long fetched keys are used before they are fetched again, and how soon an unknown `kid` may fetch them again. */
export interface KeyCaching {
  jwksCacheSeconds: number;
  jwksCooldownSeconds: number;
}

/** An issuer whose access tokens (and passport JWTs) are trusted: `issuers:`. */
export interface TrustedIssuer extends KeyCaching {
  /** The tokens' `iss`, compared exactly. */
  issuer: string;
  keys: KeySource;
  /** A token's `aud` must name one of these. */
  audience: string[];
  algorithms: string[];
  /** The claim holding the caller's groups or roles. */
  groupsClaim: string;
}

/** An issuer whose Passport visas are trusted: `visas:`. */
export interface TrustedVisaIssuer extends KeyCaching {
  issuer: string;
  keys: KeySource;
  algorithms: string[];
}

export type Grant =
  | { kind: 'identity'; issuer: string; subject: string; level: Level }
  /** `issuer` given: only that issuer's tokens carry the group. */
  | { kind: 'group'; group: string; issuer?: string; level: Level }
  | { kind: 'visa'; level: Level };

export interface DatasetRule {
  anonymous: Level;
  /** Already at least `anonymous`. */
  authenticated: Level;
  /** What the value of a ControlledAccessGrants visa for this dataset is, exactly. */
  url?: string;
  grants: Grant[];
}

export interface KeyEntry {
  name: string;
  /** The salted hash of the key (keys.ts). */
  hash: string;
  datasets: ReadonlyMap<string, Level>;
}

export interface AccessPolicy {
  /** The file it was read from, for log lines. */
  source: string;
  issuers: TrustedIssuer[];
  visaIssuers: TrustedVisaIssuer[];
  datasets: ReadonlyMap<string, DatasetRule>;
  /** The rule of datasets that `datasets` does not name. */
  defaultRule: DatasetRule;
  keys: KeyEntry[];
  /** Clock skew allowed on `exp`, `nbf` and a visa's `asserted`. */
  leewaySeconds: number;
}

export const CONTROLLED_ACCESS_GRANTS = 'ControlledAccessGrants';

function grantApplies(grant: Grant, caller: Extract<Caller, { kind: 'identity' }>, rule: DatasetRule): boolean {
  switch (grant.kind) {
    case 'identity':
      return grant.issuer === caller.issuer && grant.subject === caller.subject;
    case 'group':
      return (grant.issuer === undefined || grant.issuer === caller.issuer) && caller.groups.includes(grant.group);
    case 'visa':
      return rule.url !== undefined && caller.visas.some((v) => v.type === CONTROLLED_ACCESS_GRANTS && v.value === rule.url);
  }
}

/**
 * The level `policy` gives `caller` for the dataset named `datasetName`: the highest of the dataset's
 * anonymous level, its authenticated level (for a verified identity) and every grant that applies
 * (for a key: the key's own level for the dataset). A dataset the policy does not name takes its
 * default rule. Without a policy (`null`) every dataset is open: `data` for everyone.
 */
export function levelOf(policy: AccessPolicy | null, caller: Caller, datasetName: string): Level {
  if (policy === null) return OPEN_LEVEL;
  const rule = policy.datasets.get(datasetName) ?? policy.defaultRule;
  switch (caller.kind) {
    case 'anonymous':
      return rule.anonymous;
    case 'key': {
      const key = policy.keys.find((k) => k.name === caller.name);
      return highest([rule.anonymous, key?.datasets.get(datasetName) ?? 'none']);
    }
    case 'identity':
      return highest([rule.authenticated, ...rule.grants.filter((g) => grantApplies(g, caller, rule)).map((g) => g.level)]);
  }
}
