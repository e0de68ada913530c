/**
 * htsget 1.3 under `/htsget`: tickets for read group sets (`/htsget/reads/{id}`, BAM and CRAM) and
 * variant sets (`/htsget/variants/{id}`, VCF and BCF), by GET or POST, their service-info, and the
 * signed data endpoint the tickets point at. Every error is in htsget's own form.
 */
import { SERVER_NAME, SERVER_VERSION } from '../../config.js';
import { GAException } from '../../protocol/errors.js';
import type { Reply } from '../../protocol/reply.js';
import type { Route, RouteInput } from '../../http/router.js';
import type { AppContext } from '../../areas/area.js';
import { defaultServiceInfoOptions } from '../../areas/info/index.js';
import { UserError } from '../../user-error.js';
import { DATA_PATH, dataPath, dataReply } from './data.js';
import { HtsgetError, writeHtsgetError } from './errors.js';
import { FileLayouts } from './layouts.js';
import { fromBody, fromQuery, parametersOf, UNPLACED, type Datatype, type TicketRequest } from './request.js';
import { FORMATS, ServedSets, type Format, type ServedFile } from './sets.js';
import { DEFAULT_SIGNED_URL_SECONDS, UrlSigner } from './signing.js';
import { Ticket } from './ticket.js';
import { fillTicket } from './tickets.js';

/** htsget's media type for tickets (htsget 1.3, "Protocol essentials"). */
const TICKET_TYPE = 'application/vnd.ga4gh.htsget.v1.3.0+json; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** A shorter key is refused: anyone who guesses it can sign URLs for any file. */
const MIN_KEY_LENGTH = 32;

const LABEL: Record<Datatype, string> = { reads: 'read group set', variants: 'variant set' };

/** A JSON answer, never content-coded: htsget allows transfer-coding only ("Protocol essentials"). */
const content = (contentType: string, text: string): Reply => ({ kind: 'content', contentType, body: Buffer.from(text), asIs: true });

export function htsgetRoutes({ registry, config }: AppContext): Route[] {
  const options = config.options;
  const key = typeof options.signingKey === 'string' ? options.signingKey : undefined;
  if (key !== undefined && key.length < MIN_KEY_LENGTH) throw new UserError(`--signing-key must be at least ${MIN_KEY_LENGTH} characters long`);
  const signer = new UrlSigner(key, typeof options.signedUrlSeconds === 'number' ? options.signedUrlSeconds : DEFAULT_SIGNED_URL_SECONDS);
  const sets = new ServedSets(registry, config.registryCacheMs);
  const layouts = new FileLayouts();
  const publicUrl = typeof options.publicUrl === 'string' ? options.publicUrl.replace(/\/+$/, '') : undefined;
  const text = (name: string, fallback: string) => (typeof options[name] === 'string' ? (options[name] as string) : fallback);

  async function ticket(datatype: Datatype, id: string, request: TicketRequest, remote: RouteInput['remote']): Promise<Reply> {
    const set = await sets.resolve(datatype, id);
    const format = (request.format ?? FORMATS[datatype][0]) as Format;
    if (!FORMATS[datatype].includes(format)) {
      throw new HtsgetError('UnsupportedFormat', `format must be ${FORMATS[datatype].join(' or ')} for ${datatype}, not '${request.format}'`);
    }
    if (!set.files.has(format)) {
      throw new HtsgetError('UnsupportedFormat', `${LABEL[datatype]} '${id}' is served as ${[...set.files.keys()].join(' and ')}, not ${format}`);
    }
    for (const { referenceName } of request.regions ?? []) {
      if (!(datatype === 'reads' && referenceName === UNPLACED) && !set.references.has(referenceName)) {
        throw new HtsgetError('NotFound', `${LABEL[datatype]} '${id}' has no reference '${referenceName}'`);
      }
    }
    // Absolute URLs: the operator's public URL, or the address the client reached this server at.
    const base = publicUrl ?? `http://${remote.host ?? `${config.host}:${config.port}`}`;
    const urls = new Map<ServedFile, string>();
    const urlOf = (file: ServedFile) => urls.get(file) ?? urls.set(file, base + signer.sign(dataPath(set, file))).get(file)!;
    const out = new Ticket(format, urlOf);
    try {
      await fillTicket(set, format, request, out, layouts);
    } catch (e) {
      throw GAException.unreadable('the files', `${LABEL[datatype]} '${id}'`, e);
    }
    return content(TICKET_TYPE, out.json());
  }

  const serviceInfo = (datatype: Datatype, remote: RouteInput['remote']): Reply =>
    content(JSON_TYPE, JSON.stringify({
      id: `${text('serviceId', defaultServiceInfoOptions.serviceId)}.htsget.${datatype}`,
      name: `${SERVER_NAME} htsget ${datatype}`,
      type: { group: 'org.ga4gh', artifact: 'htsget', version: '1.3.0' },
      description: `htsget 1.3 tickets for the ${LABEL[datatype]}s of this server (${FORMATS[datatype].join(', ')})`,
      organization: {
        name: text('organizationName', defaultServiceInfoOptions.organizationName),
        url: text('organizationUrl', publicUrl ?? `http://${remote.host ?? `${config.host}:${config.port}`}`),
      },
      version: SERVER_VERSION,
      htsget: { datatype, formats: FORMATS[datatype], fieldsParameterEffective: false, tagsParametersEffective: false },
    }));

  const routes: Route[] = [
    {
      method: 'GET',
      path: DATA_PATH + '/{set}/{format}/{file}',
      ownQuery: true,
      // The signature, bound to the ticket's file and ranges, is the authority: tools fetch without the caller's token.
      signedAccess: true,
      handle: ({ params, query, headers }) => dataReply(sets, signer, params, parametersOf(query), typeof headers.range === 'string' ? headers.range : undefined),
    },
  ];
  for (const datatype of ['reads', 'variants'] as const) {
    routes.push(
      { method: 'GET', path: `/htsget/${datatype}/service-info`, ownQuery: true, handle: async ({ remote }) => serviceInfo(datatype, remote) },
      {
        method: 'GET',
        path: `/htsget/${datatype}/{id+}`,
        ownQuery: true,
        handle: ({ params, query, remote }) => ticket(datatype, params.id, fromQuery(parametersOf(query), datatype), remote),
      },
      {
        method: 'POST',
        path: `/htsget/${datatype}/{id+}`,
        handle: ({ params, body, remote }) => ticket(datatype, params.id, fromBody(body, datatype), remote),
      },
    );
  }
  return routes.map((route) => ({ ...route, writeError: writeHtsgetError }));
}
