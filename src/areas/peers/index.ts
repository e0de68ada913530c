/**
 * The peer area: `POST /peers/list`, `POST /peers/announce` (and its alias `POST /announce`), the
 * operator's `repo` commands for the list and the announcement log, and the `serve` options that set
 * the acceptance policy. `GET /info` lives in the info area.
 */
import { Option, type Command } from 'commander';
import { attributesFromJson } from '../../cli/attributes.js';
import { action, formatTable, integerAtLeast, say } from '../../cli/output.js';
import type { GAException } from '../../protocol/errors.js';
import { UserError } from '../../user-error.js';
import { pageReply, recordReply } from '../../protocol/reply.js';
import type { Area, CommandContext } from '../area.js';
import type { Remote } from './service.js';
import { defaultPeerSettings, PEER_POLICIES } from './settings.js';
import { deletePeer, listAnnouncements, listPeers, peerMigrations, upsertPeer } from './store.js';
import { operatorUrl } from './url.js';

/** What the operator gave for start-up announcements, checked before the server starts. */
function announceTargetsOf(options: Record<string, unknown>): { publicUrl: string; targets: string[] } | undefined {
  const targets = (options.announceTo as string[] | undefined) ?? [];
  if (!targets.length) return undefined;
  if (typeof options.publicUrl !== 'string') throw new UserError('--announce-to needs --public-url: the URL other servers should list');
  return {
    publicUrl: operatorUrl(options.publicUrl, '--public-url'),
    targets: targets.map((t) => operatorUrl(t, '--announce-to')),
  };
}

export const peersArea: Area = {
  name: 'peers',
  migrations: peerMigrations,

  async routes({ registry, config, onClose }) {
    const [{ scheduleAnnouncements }, { AnnouncePeerRequest, AnnouncePeerResponse, ListPeersRequest, ListPeersResponse }, { peerService, peerSettingsOf, readSeedFile, seedPeers }] =
      await Promise.all([import('./announce-to.js'), import('./messages.js'), import('./service.js')]);
    const service = peerService(registry, config.paging, peerSettingsOf(config.options));
    onClose(() => service.close());

    // The seed file is read now (a bad line stops start-up); its rows are written before any list answers.
    const seedFile = config.options.peers as string | undefined;
    const seeded = seedFile ? seedPeers(registry, readSeedFile(seedFile)) : Promise.resolve();
    seeded.catch((e) => process.stderr.write(`ga4gh: seeding peers from ${seedFile} failed: ${(e as Error).message}\n`));

    const outgoing = announceTargetsOf(config.options);
    if (outgoing) {
      const announcing = scheduleAnnouncements(outgoing.targets, outgoing.publicUrl, ({ target, ok, detail }) =>
        process.stderr.write(
          ok ? `ga4gh: announced ${outgoing.publicUrl} to ${target}\n` : `ga4gh: announcing to ${target} failed: ${detail}\n`,
        ),
      );
      onClose(() => announcing.cancel());
    }

    const announce = async ({ body, remote }: { body: unknown; remote: { address: string; userAgent: string } }) => {
      await service.announce(body, remote);
      return recordReply(AnnouncePeerResponse, { success: true });
    };
    return [
      {
        method: 'POST',
        path: '/peers/list',
        request: ListPeersRequest,
        handle: async ({ body }) => {
          await seeded;
          return pageReply(ListPeersResponse, await service.list(body));
        },
      },
      // No `request` description: the service reads the body itself, so that every malformed
      // announcement is logged and answered with `success: false`.
      ...['/peers/announce', '/announce'].map((path) => ({
        method: 'POST' as const,
        path,
        handle: announce,
        documentedRequest: AnnouncePeerRequest,
        errorFields: AnnouncePeerResponse,
        onBadBody: (error: GAException, remote: Remote) => service.refuseUnreadable(error, remote),
      })),
    ];
  },

  serveOptions(serve: Command) {
    serve
      .addOption(
        new Option('--peer-policy <policy>', 'what an announcement does: log (record only), verify (add once its GET /info answers our protocol version), open (add every well-formed URL)')
          .choices([...PEER_POLICIES])
          .default(defaultPeerSettings.policy),
      )
      .option('--allow-private-peers', 'let peer verification reach loopback, private and link-local addresses (local testing only)')
      .option('--max-peers <n>', 'announcements add no peer beyond this many', integerAtLeast(0), defaultPeerSettings.maxPeers)
      .option('--announce-rate <n>', 'announcements accepted per remote address per minute', integerAtLeast(1), defaultPeerSettings.announceRate)
      .option('--announcement-log-size <n>', 'announcement log entries kept in the registry', integerAtLeast(1), defaultPeerSettings.announcementLogSize)
      .option('--peer-verify-timeout <ms>', 'time allowed for a candidate peer to answer GET /info', integerAtLeast(1), defaultPeerSettings.verifyTimeoutMs)
      .option('--peers <file>', 'add the URLs in this file (one a line) to the peer list at start-up')
      .option('--public-url <url>', 'the URL other servers reach this one at: announced by --announce-to, refused in announcements, the base of GET /service-info URLs')
      .option('--announce-to <urls...>', 'announce --public-url to these servers at start-up');
  },

  commands(repo: Command, { withRegistry }: CommandContext) {
    repo
      .command('add-peer')
      .description('add a peer to the list (or replace the attributes of a listed one)')
      .argument('<registry>', 'registry file or postgres:// URL')
      .argument('<url>', "the peer's base URL")
      .option('--attributes <json>', 'attributes: {"key": "value" or [values]}, or the wire form {"attr": {...}}')
      .action(
        action(async (location: string, raw: string, opts: { attributes?: string }) => {
          const url = operatorUrl(raw);
          const attributes = opts.attributes === undefined ? undefined : attributesFromJson(opts.attributes);
          const added = await withRegistry(location, (registry) => upsertPeer(registry, url, attributes, 'operator'));
          say(added ? `added peer ${url}` : `updated peer ${url}`);
        }),
      );
    repo
      .command('remove-peer')
      .description('remove a peer from the list')
      .argument('<registry>')
      .argument('<url>')
      .action(
        action(async (location: string, raw: string) => {
          const url = operatorUrl(raw);
          const removed = await withRegistry(location, (registry) => deletePeer(registry, url));
          if (!removed) throw new UserError(`no peer ${url} in ${location}`);
          say(`removed peer ${url}`);
        }),
      );
    repo
      .command('list-peers')
      .description('show the peer list')
      .argument('<registry>')
      .action(
        action(async (location: string) => {
          const rows = await withRegistry(location, (registry) => listPeers(registry, undefined, Number.MAX_SAFE_INTEGER));
          if (!rows.length) return say('no peers');
          say(formatTable(['url', 'origin', 'added', 'attributes'], rows.map((r) => [r.url, r.origin, r.added_at, r.attributes ?? ''])));
        }),
      );
    repo
      .command('announcements')
      .description('show the newest announcements received, with what became of each')
      .argument('<registry>')
      .option('--limit <n>', 'how many to show', integerAtLeast(1), 20)
      .action(
        action(async (location: string, opts: { limit: number }) => {
          const rows = await withRegistry(location, (registry) => listAnnouncements(registry, opts.limit));
          if (!rows.length) return say('no announcements');
          say(
            formatTable(
              ['received', 'from', 'outcome', 'url', 'detail', 'user agent'],
              rows.map((r) => [r.received_at, r.remote_address, r.outcome, r.url ?? '(none)', r.detail ?? '', r.user_agent]),
            ),
          );
        }),
      );
  },

  async inventory(registry) {
    const rows = await listPeers(registry, undefined, Number.MAX_SAFE_INTEGER);
    return [{ title: 'Peers', columns: ['url', 'origin'], rows: rows.map((r) => [r.url, r.origin]) }];
  },
};
