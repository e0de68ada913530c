/** Which URLs the policy may name for fetching keys and as issuers. */

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);
const isLoopback = (hostname: string) => LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);

/**
 * Why `text` may not be an issuer or a URL keys are fetched from, or undefined when it may: an
 * absolute `https:` URL without credentials or fragment; plain `http:` only on a loopback address
 * (a test issuer, or a proxy on the same machine), since keys fetched in clear could be anyone's.
 */
export function fetchableUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not an absolute URL`;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    return `${text} is not an https: URL (plain http: only on a loopback address)`;
  }
  if (url.username || url.password) return `${text} holds credentials`;
  if (url.hash) return `${text} has a fragment`;
  return undefined;
}

/** The OpenID Connect discovery document of an issuer. */
export const discoveryUrlOf = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
