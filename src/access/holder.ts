/**
 * The access policy a server is running with, in one holder: read and checked whole at start, read
 * again on `reload()` (SIGHUP) and when the file changes. A new policy replaces the old one in one
 * assignment, so a request that takes `current()` once sees one policy throughout; a policy that
 * fails its checks is refused with one log line and the old one stays in force.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../user-error.js';
import type { AccessPolicy } from './policy.js';
import { PolicyInvalid, readPolicy } from './policy-file.js';
import { callerResolver, OPEN_RESOLVER, type CallerResolver } from './resolve-caller.js';
import { KeySets } from './tokens.js';

/** One policy and what resolves callers under it; never changed once made. */
export interface AccessSnapshot {
  /** null: no policy file, every dataset open. */
  readonly policy: AccessPolicy | null;
  readonly resolver: CallerResolver;
  readonly loadedAt: Date;
}

export interface AccessPolicyOptions {
  /** The policy file; undefined: every dataset is open. */
  file?: string;
  /** The names of the datasets of the registry: a policy naming another is refused. */
  knownDatasets(): Promise<ReadonlySet<string>>;
  /** Writes one line to the server's log. */
  log(line: string): void;
  /** How long the file must stay unchanged after a change before it is read (editors write in steps). */
  debounceMs?: number;
}

const DEFAULT_DEBOUNCE_MS = 300;
const FILE_CHANGED = 'file changed';

const counted = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

function summaryOf(policy: AccessPolicy): string {
  return [
    counted(policy.datasets.size, 'dataset'),
    counted(policy.issuers.length, 'issuer'),
    counted(policy.visaIssuers.length, 'visa issuer'),
    counted(policy.keys.length, 'key'),
  ].join(', ');
}

export class AccessPolicyHolder {
  private snapshot: AccessSnapshot;
  private readonly keySets = new KeySets();
  private loadedText: string | undefined;
  private watcher: fs.FSWatcher | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain: string | undefined;

  private constructor(private readonly options: AccessPolicyOptions) {
    this.snapshot = { policy: null, resolver: OPEN_RESOLVER, loadedAt: new Date() };
  }

  /** The policy in force; take it once per request. */
  current(): AccessSnapshot {
    return this.snapshot;
  }

  /** One line for the log at start: the policy in force, or that every dataset is open. */
  summary(): string {
    const { policy } = this.snapshot;
    if (policy === null) return 'access: no --access-policy given: every dataset is open to every caller (level data)';
    return `access policy ${this.options.file} in force: ${summaryOf(policy)}`;
  }

  /** Reads and checks the policy file (a UserError naming every problem in one line when it fails), then watches it. */
  static async start(options: AccessPolicyOptions): Promise<AccessPolicyHolder> {
    const holder = new AccessPolicyHolder(options);
    if (options.file === undefined) return holder;
    try {
      await holder.load();
    } catch (e) {
      throw new UserError(`access policy ${options.file}: ${(e as Error).message}`);
    }
    holder.watch();
    return holder;
  }

  /** Reads the file again: the new policy if it passes every check, else one log line and the old one stays. */
  reload(trigger: string): Promise<void> {
    if (this.options.file === undefined) {
      this.options.log(`access: ${trigger}: no --access-policy to read again; every dataset stays open`);
      return Promise.resolve();
    }
    if (this.reloading) {
      // One reload at a time; a trigger during one reads the file once more after it.
      this.reloadAgain = trigger;
      return this.reloading;
    }
    this.reloading = (async () => {
      let next: string | undefined = trigger;
      while (next !== undefined) {
        this.reloadAgain = undefined;
        await this.reloadOnce(next);
        next = this.reloadAgain;
      }
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.debounce);
  }

  private async reloadOnce(trigger: string): Promise<void> {
    const file = this.options.file!;
    const previous = this.snapshot;
    try {
      // A change event that leaves the text as it was (a touch, an editor's backup) is no reload.
      const changed = await this.load(trigger === FILE_CHANGED);
      if (changed) this.options.log(`access policy ${file} reloaded (${trigger}): ${summaryOf(this.snapshot.policy!)}`);
    } catch (e) {
      this.options.log(`access policy ${file} refused (${trigger}), the one loaded at ${previous.loadedAt.toISOString()} stays in force: ${(e as Error).message}`);
    }
  }

  /** Reads, checks and swaps in the policy; false when the text is what is in force already and `skipUnchanged`. */
  private async load(skipUnchanged = false): Promise<boolean> {
    const file = this.options.file!;
    let text: string;
    try {
      text = await fs.promises.readFile(file, 'utf8');
    } catch (e) {
      throw new Error(`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (skipUnchanged && text === this.loadedText) return false;
    const { policy, mentions } = readPolicy(text, path.basename(file));
    const known = await this.options.knownDatasets();
    const unknown = mentions.filter((m) => !known.has(m.name)).map((m) => `${m.where}: the registry holds no dataset ${m.name}`);
    if (unknown.length) throw new PolicyInvalid(unknown);
    this.keySets.keepOnly([...policy.issuers, ...policy.visaIssuers]);
    this.snapshot = { policy, resolver: callerResolver(policy, this.keySets), loadedAt: new Date() };
    this.loadedText = text;
    return true;
  }

  /** Watches the file's folder, not the file: editors and deployment tools replace a file by renaming another onto it. */
  private watch(): void {
    const file = this.options.file!;
    const name = path.basename(file);
    try {
      this.watcher = fs.watch(path.dirname(path.resolve(file)), { persistent: false }, (_event, changed) => {
        if (changed !== null && changed !== name) return;
        clearTimeout(this.debounce);
        this.debounce = setTimeout(() => void this.reload(FILE_CHANGED), this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
      });
      this.watcher.on('error', (e) => {
        this.options.log(`access policy ${file}: no longer watched (${e.message}); SIGHUP still reads it again`);
        this.close();
      });
    } catch (e) {
      this.options.log(`access policy ${file}: not watched (${(e as Error).message}); SIGHUP reads it again`);
    }
  }
}
