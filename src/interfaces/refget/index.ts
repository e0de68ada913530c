/**
 * refget 2 under `/refget`: the registered references' sequences by digest, for CRAM decoders (htslib
 * fetches `REF_PATH=http://HOST/refget/sequence/%s` with the MD5, `Accept: *\/*`), genome browsers and
 * the refget compliance suite.
 * - `GET /refget/sequence/{id}`: the bases, whole, or a range by `start`/`end` (200) or by one
 *   `Range: bytes=` header (206); across the origin of a circular sequence with start > end.
 * - `GET /refget/sequence/{id}/metadata`: its digests, length and aliases.
 * - `GET /refget/sequence/service-info`: service-info 1.0 with refget's capabilities.
 * Media types, ids, ranges and errors are refget's own (./media.ts, ./ids.ts, ./ranges.ts, ./errors.ts).
 */
import { SERVER_NAME } from '../../config.js';
import { serviceInfoBase } from '../../areas/info/index.js';
import { SequenceFiles } from '../../areas/references/sequences.js';
import type { AppContext } from '../../areas/area.js';
import type { Route, RouteInput } from '../../http/router.js';
import type { Reply } from '../../protocol/reply.js';
import { errorReply, RefgetError, writeRefgetError } from './errors.js';
import { ga4ghOf, trunc512Of } from './ids.js';
import { JSON_MEDIA, negotiate, SEQUENCE_MEDIA, withCharset, type MediaChoice } from './media.js';
import { basesWanted } from './ranges.js';
import { refgetSequences } from './sequences.js';

const REFGET_TYPE = { group: 'org.ga4gh', artifact: 'refget', version: '2.0.0' };

/** A handler whose refget errors are answered in refget's form; any other failure is the HTTP layer's to answer. */
const answering =
  (handle: (input: RouteInput) => Promise<Reply>) =>
  async (input: RouteInput): Promise<Reply> => {
    try {
      return await handle(input);
    } catch (e) {
      if (e instanceof RefgetError) return errorReply(e);
      throw e;
    }
  };

function mediaOf(input: RouteInput, choices: MediaChoice[]): string {
  const chosen = negotiate(input.headers.accept, choices);
  if (!chosen) {
    throw new RefgetError(406, `header 'Accept' (${input.headers.accept}) names no type this endpoint answers in: ${choices.flatMap((c) => c.names).join(', ')}`);
  }
  return chosen;
}

function jsonReply(type: string, document: unknown): Reply {
  // Escaped to ASCII, as the charset says (a name or an accession may hold other characters).
  const text = JSON.stringify(document).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const body = Buffer.from(text);
  return { kind: 'exact', status: 200, headers: { 'content-type': withCharset(type), vary: 'Accept' }, length: body.length, pieces: [body] };
}

export function refgetRoutes({ registry, config }: AppContext): Route[] {
  const sequences = refgetSequences(registry, new SequenceFiles(), config.registryCacheMs);
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/refget/sequence/service-info',
      ownQuery: true,
      handle: answering(async (input) => {
        const type = mediaOf(input, JSON_MEDIA);
        const { id, organization, contactUrl, environment, version } = serviceInfoBase(config, input.remote.host);
        return jsonReply(type, {
          id: `${id}.refget`,
          name: `${SERVER_NAME} refget`,
          type: REFGET_TYPE,
          description: 'Reference sequences of the registered reference sets, by their digests (refget 2)',
          organization,
          contactUrl,
          environment,
          version,
          refget: {
            circular_supported: true,
            subsequence_limit: null,
            algorithms: ['md5', 'ga4gh', 'trunc512'],
            identifier_types: ['insdc'],
          },
        });
      }),
    },
    {
      method: 'GET',
      path: '/refget/sequence/{id}',
      ownQuery: true,
      // Checked in this order, as the compliance suite expects: the id, the media type, the range.
      handle: answering(async (input) => {
        const sequence = await sequences.lookup(input.params.id);
        const type = mediaOf(input, SEQUENCE_MEDIA);
        const wanted = basesWanted(input.query, input.headers.range, sequence.length, sequence.circular);
        if (!sequence.holder) {
          const sets = sequence.setNames.map((n) => `'${n}'`).join(', ');
          const one = sequence.setNames.length === 1;
          throw new RefgetError(
            404,
            `sequence '${input.params.id}' is in reference set${one ? '' : 's'} ${sets}, which hold${one ? 's' : ''} no sequence: registered from a sequence dictionary, with names, lengths and MD5s only`,
          );
        }
        const headers: Record<string, string> = { 'content-type': withCharset(type), vary: 'Accept', 'accept-ranges': 'bytes' };
        if (wanted.contentRange) headers['content-range'] = wanted.contentRange;
        return {
          kind: 'exact',
          status: wanted.status,
          headers,
          length: wanted.spans.reduce((n, [start, end]) => n + end - start, 0),
          pieces: await sequences.bases(sequence.holder, wanted.spans),
        };
      }),
    },
    {
      method: 'GET',
      path: '/refget/sequence/{id}/metadata',
      ownQuery: true,
      handle: answering(async (input) => {
        const sequence = await sequences.lookup(input.params.id);
        const { md5, sha512t24u } = sequence;
        return jsonReply(mediaOf(input, JSON_MEDIA), {
          metadata: {
            id: md5,
            md5,
            ga4gh: sha512t24u === null ? null : ga4ghOf(sha512t24u),
            trunc512: sha512t24u === null ? null : trunc512Of(sha512t24u),
            length: sequence.length,
            aliases: sequence.accessions.map((alias) => ({ alias, naming_authority: 'insdc' })),
          },
        });
      }),
    },
  ];
  // Errors the HTTP layer raises before a route runs (refused credentials, limits) in refget's form too.
  return routes.map((route) => ({ ...route, writeError: writeRefgetError }));
}
