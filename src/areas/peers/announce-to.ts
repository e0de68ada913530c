/** `serve --announce-to`: tell other servers about this one at start-up, in the background. */
import { SERVER_NAME, SERVER_VERSION } from '../../config.js';
import { attributesOf } from '../../protocol/common.js';

export interface AnnounceOutcome {
  target: string;
  ok: boolean;
  detail: string;
}

/** Announces `publicUrl` to one server; never throws. */
export async function announceTo(target: string, publicUrl: string, timeoutMs: number, stop: AbortSignal): Promise<AnnounceOutcome> {
  const body = { peer: { url: publicUrl, attributes: attributesOf({ name: [SERVER_NAME], version: [SERVER_VERSION] }) } };
  try {
    const res = await fetch(`${target}/peers/announce`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': `${SERVER_NAME}/${SERVER_VERSION}` },
      body: JSON.stringify(body),
      signal: AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]),
      redirect: 'error',
    });
    const text = await res.text();
    let reply: { success?: unknown; message?: unknown } = {};
    try {
      reply = JSON.parse(text);
    } catch {
      // reported below as an answer without success
    }
    if (res.ok && reply.success === true) return { target, ok: true, detail: 'accepted as well formed' };
    const why = typeof reply.message === 'string' ? `: ${reply.message}` : '';
    return { target, ok: false, detail: `HTTP ${res.status}${why}` };
  } catch (e) {
    const error = e as Error & { cause?: { code?: string } };
    return { target, ok: false, detail: error.cause?.code ?? error.message };
  }
}

/** Announces to every target after `delayMs` (so the listener is up before peers call back). */
export function scheduleAnnouncements(
  targets: string[],
  publicUrl: string,
  report: (outcome: AnnounceOutcome) => void,
  delayMs = 250,
): { cancel(): void } {
  const stop = new AbortController();
  const timer = setTimeout(async () => {
    for (const target of targets) {
      if (stop.signal.aborted) break;
      report(await announceTo(target, publicUrl, 10_000, stop.signal));
    }
  }, delayMs);
  timer.unref();
  return {
    cancel() {
      stop.abort();
      clearTimeout(timer);
    },
  };
}
