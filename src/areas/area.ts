/**
 * What an area (datasets, references, variants, RNA, peers) plugs into the server and the CLI: its
 * schema migrations, its routes, its `repo` commands, and what it shows in `repo list` / `repo check`.
 */
import type { Command } from 'commander';
import type { AccessPolicyHolder } from '../access/holder.js';
import type { ServerConfig } from '../config.js';
import type { Route } from '../http/router.js';
import type { Migration } from '../registry/migrations.js';
import type { Registry } from '../registry/registry.js';
import type { PageWorkerPool } from '../workers/pool.js';

export interface AppContext {
  registry: Registry;
  config: ServerConfig;
  /** The worker threads large replies are built in (undefined with `--page-workers 0`: on the main thread). */
  pageWorkers?: PageWorkerPool;
  /**
   * The access policy in force. The HTTP layer resolves each request's caller under it; dataset-scoped
   * ids and dataset listings apply it through access/request-access.ts.
   */
  access: AccessPolicyHolder;
  /** The names of the areas this server serves, in order. */
  areaNames: string[];
  /** Registers cleanup to run when the server stops (open files, timers). */
  onClose(fn: () => void | Promise<void>): void;
}

/** What `ga4gh repo` hands each area's commands. */
export interface CommandContext {
  /**
   * Runs `fn` with the registry at `location` open, closing it afterwards; refuses a registry that is
   * missing or needs `repo migrate` (the CLI knows every area's migrations, the registry does not).
   */
  withRegistry<T>(location: string, fn: (registry: Registry) => Promise<T>): Promise<T>;
  /** Every area of the program, for commands that ask the others (who uses a reference set, what a dataset holds). */
  areas: readonly Area[];
}

export interface CheckOptions {
  deep: boolean;
  /** What is being read, and how many of its bytes so far. */
  progress(what: string, bytesRead: number, size: number): void;
}

/** A cell of `repo list`: numbers stay numbers and lists stay lists in `--json`; null is empty. */
export type InventoryValue = string | number | string[] | null;

export interface InventorySection {
  title: string;
  columns: string[];
  rows: InventoryValue[][];
}

/**
 * Names a registered set holds that nothing registered resolves yet (effects or feature types with no
 * ontology term, sample names no biosample has): registering the missing piece resolves them, before
 * or after the set, so `repo list` and `repo check` say what is missing.
 */
export interface Unresolved {
  /** The set's id, as served. */
  id: string;
  /** The set as `repo` names it: "feature set 'x' of dataset 'd'". */
  set: string;
  /** What the names are: "feature types without an ontology term". */
  what: string;
  /** The names, each once; empty when they are not kept in the registry (effects are in the VCF, read by `repo check --deep` only). */
  names: string[];
  /** What resolves them. */
  fix: string;
}

/**
 * An area's index module imports statically only its store (with its migrations) and the protocol
 * layer's shared modules, which every start loads anyway; its services, loaders and messages are
 * imported where they are used (`routes`, a command's action, `inventory`, `check`). Every
 * `ga4gh repo` command is a process of its own, and loading every area's modules at each start cost
 * ~0.45 s of it.
 */
export interface Area {
  name: string;
  migrations: Migration[];
  routes(app: AppContext): Route[] | Promise<Route[]>;
  /** Adds this area's subcommands to `ga4gh repo`. */
  commands(repo: Command, cli: CommandContext): void;
  /** Adds this area's options to `ga4gh serve`; their values reach routes() as `config.options`. */
  serveOptions?(serve: Command): void;
  inventory?(registry: Registry): Promise<InventorySection[]>;
  /**
   * What this area holds that uses a reference set, one phrase each ("variant set 'x' of dataset
   * 'd'"): `remove-referenceset` names them when it refuses.
   */
  referenceSetUsers?(registry: Registry, referenceSetName: string): Promise<string[]>;
  /** How many records of each kind this area holds in a dataset: `remove-dataset` reports them. */
  datasetContents?(registry: Registry, datasetName: string): Promise<Array<[kind: string, count: number]>>;
  /**
   * Opens every registered file and index; returns one line per problem found. With `deep`, reads
   * every byte of every file (`repo check --deep`), reporting how far it got through `progress`.
   */
  check?(registry: Registry, options: CheckOptions): Promise<string[]>;
  /**
   * What this area's sets hold that nothing registered resolves yet. `repo check` passes its options:
   * with `deep`, an area may read its files for names the registry does not keep (annotation effects).
   */
  unresolved?(registry: Registry, check?: CheckOptions): Promise<Unresolved[]>;
}
