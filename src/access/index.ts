/**
 * Access control: who a caller is (a verified token with its groups and Passport visas, an API key,
 * or no one) and the level a policy gives them for each dataset. The HTTP layer resolves the caller
 * of each request once, from the snapshot of the policy in force; every interface asks the same
 * levelOf. docs/access.md describes the policy file.
 */
export { ANONYMOUS, callerInLog, type Caller, type VerifiedVisa } from './callers.js';
export { AccessPolicyHolder, type AccessPolicyOptions, type AccessSnapshot } from './holder.js';
export { newApiKey, looksLikeApiKey } from './keys.js';
export { allows, highest, isLevel, LEVELS, lower, OPEN_LEVEL, type Level } from './levels.js';
export { levelOf, type AccessPolicy, type DatasetRule, type Grant } from './policy.js';
export { PolicyInvalid, readPolicy } from './policy-file.js';
export { callerResolver, OPEN_RESOLVER, PASSPORT_HEADER, type CallerResolution, type CallerResolver, type RequestCredentials } from './resolve-caller.js';
export { CredentialsRefused, INVALID_TOKEN_CHALLENGE, KeySets } from './tokens.js';
