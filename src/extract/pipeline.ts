import { z } from 'zod';
import { CHAIN_METRICS, METRIC_INTERVALS } from '../reference/metrics.ts';
import { PRIMARY_NETWORK_TX_TYPES } from '../schemas/primary.ts';

/** The real services; a pipeline names other URLs to point at the emulator or a private node. */
export const DEFAULT_URLS = {
  data: 'https://data-api.avax.network',
  metrics: 'https://metrics.avax.network',
  node: 'https://api.avax.network',
} as const;

const bech32Address = z
  .string()
  .regex(
    /^([PX]-)?(avax|fuji)1[02-9ac-hj-np-z]{38}$/,
    'a P-/X-Chain address like "avax1…" or "P-fuji1…" (bech32)',
  );
const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address: 0x followed by 40 hex digits');
const nodeId = z.string().regex(/^NodeID-[1-9A-HJ-NP-Za-km-z]{20,40}$/, 'a node id like "NodeID-…" (cb58)');
const cb58Id = z
  .string()
  .regex(/^[1-9A-HJ-NP-Za-km-z]{40,60}$/, 'a cb58 id such as a subnet or blockchain id');
export type PrimaryNetworkTxType = (typeof PRIMARY_NETWORK_TX_TYPES)[number];
export { PRIMARY_NETWORK_TX_TYPES };

const txType = z.enum(PRIMARY_NETWORK_TX_TYPES, {
  error: `a transaction type (PrimaryNetworkTxType): one of ${PRIMARY_NETWORK_TX_TYPES.join(', ')}`,
});
const l1ValidationId = z
  .string()
  .regex(
    /^[1-9A-HJ-NP-Za-km-z]{40,60}$/,
    "an L1 validation id (cb58), as a transaction's l1ValidatorDetails.validationId gives it",
  );
/**
 * A list of `item` that names each value once: two entries of one value make two partitions of one
 * checkpoint, which a run cannot extract side by side. `sameAs` maps the spellings of one value to one
 * form (an address with or without its chain prefix, EVM hex in either case).
 */
function listedOnce<T extends z.ZodType<string>>(item: T, sameAs: (value: string) => string = (v) => v) {
  return z.array(item).superRefine((values, ctx) => {
    const first = new Map<string, number>();
    values.forEach((value, i) => {
      const at = first.get(sameAs(value));
      if (at === undefined) first.set(sameAs(value), i);
      else
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `each value once (item ${at} names it already${values[at] === value ? '' : `, as ${values[at]}`})`,
        });
    });
  });
}
const withoutChainPrefix = (address: string) => address.replace(/^[PX]-/, '');
const lowerCase = (hex: string) => hex.toLowerCase();

/**
 * No history is older than Avalanche's mainnet (launched 2020-09-21; Fuji the same month): a bound
 * before it is a typo ("99999999d") that the service would refuse only after the run began.
 */
const EARLIEST_HISTORY = '2020-09-01';
const EARLIEST_HISTORY_UNIX = Date.parse(`${EARLIEST_HISTORY}T00:00:00Z`) / 1000;

const historyBound = z
  .union([z.iso.date(), z.string().regex(/^\d+d$/)], {
    error: 'a date such as "2026-01-31", or a number of days back such as "30d"',
  })
  // Note: "Nd" is measured from the clock when the pipeline is read, i.e. when a run begins.
  .refine((bound) => (boundAt(bound, Date.now() / 1000) ?? 0) >= EARLIEST_HISTORY_UNIX, {
    error: () => {
      // A clock before the launch makes every bound too old: the clock is what to fix, not the bound.
      const clock = clockBeforeLaunch(`a date from ${EARLIEST_HISTORY} on`);
      if (clock) return clock;
      const daysSince = Math.floor((Date.now() / 1000 - EARLIEST_HISTORY_UNIX) / 86_400);
      return (
        `a date from ${EARLIEST_HISTORY} on (Avalanche's launch: there is no older history), ` +
        `or at most ${daysSince} days back such as "30d"`
      );
    },
  });

/**
 * Base URLs: http(s), with an optional path prefix (a proxy's) that every request keeps. A query or a
 * fragment would end up in the middle of the URLs built from it (`{node}?x=1/ext/bc/P`).
 */
export const BaseUrlSchema = z
  .url({ protocol: /^https?$/, error: 'an http(s) URL such as "http://127.0.0.1:8080"' })
  .refine((url) => !/[?#]/.test(url), {
    error: 'an http(s) URL without a query (?…) or fragment (#…), such as "http://127.0.0.1:8080/fuji"',
  });

/** A pipeline file (`pipelines/*.json`): what to mirror, from where, and how hard to pull. */
export const PipelineSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Path of the JSON Schema, for editors'),
    name: z.string().min(1).optional().describe('Defaults to the file name'),
    description: z.string().optional().describe('What this pipeline is for; free text for people'),
    network: z
      .enum(['mainnet', 'fuji', 'testnet'])
      .describe('The Avalanche network; testnet is an alias of fuji'),
    urls: z
      .strictObject({
        data: BaseUrlSchema.default(DEFAULT_URLS.data).describe('Data API base URL'),
        metrics: BaseUrlSchema.default(DEFAULT_URLS.metrics).describe('Metrics API base URL'),
        node: BaseUrlSchema.default(DEFAULT_URLS.node).describe(
          'Node base URL; the P-Chain RPC is {node}/ext/bc/P',
        ),
      })
      .prefault({}),
    catalog: z
      .string()
      .regex(/^postgres(ql)?:\/\//, {
        error: 'a PostgreSQL URL such as "postgres://avalake@db.internal/avalake"',
      })
      .optional()
      .describe(
        'A PostgreSQL catalog for the commit log, shared by several workers (leave the password out: use PGPASSWORD or ~/.pgpass)',
      ),
    primary: z
      .strictObject({
        addresses: listedOnce(bech32Address, withoutChainPrefix)
          .default([])
          .describe('P-/X-Chain addresses: rewards, UTXOs, transactions'),
        nodeIds: listedOnce(nodeId).default([]).describe('Validators: rewards, delegators, proposed blocks'),
        subnets: listedOnce(cb58Id).default([]).describe('Subnets whose validators are snapshotted'),
        blockIds: listedOnce(cb58Id).default([]).describe('P-Chain block ids read with platform.getBlock'),
        blockchains: listedOnce(cb58Id)
          .default([])
          .describe(
            'Blockchain ids whose status blockchain_status snapshots besides the P-, X- and C-Chain: the L1 chains platform.getBlockchains lists',
          ),
        l1ValidationIds: listedOnce(l1ValidationId)
          .default([])
          .describe(
            'L1 validation ids: p_chain_transactions reads the transactions of each (a partition each, without addresses)',
          ),
        txTypes: listedOnce(txType)
          .default([])
          .describe(
            'Transaction types p_chain_transactions reads, for its addresses and L1 validation ids; every type when empty. Changing it starts new partitions',
          ),
        balancesAsOf: z.iso
          .date({ error: 'a date such as "2026-01-31"' })
          .optional()
          .describe('Also snapshot balances as of this UTC date (the balances blockTimestamp)'),
      })
      .refine((p) => p.txTypes.length === 0 || p.addresses.length > 0 || p.l1ValidationIds.length > 0, {
        path: ['txTypes'],
        error:
          'addresses or l1ValidationIds beside it: txTypes narrows the P-Chain transactions of those, and there are none',
      })
      .prefault({}),
    evm: z
      .strictObject({
        chains: listedOnce(z.string().regex(/^\d+$/, 'an EVM chain id such as "43114"')).default([]),
        addresses: listedOnce(evmAddress, lowerCase)
          .default([])
          .describe('Wallets whose transfers and balances are mirrored'),
        collections: listedOnce(evmAddress, lowerCase)
          .default([])
          .describe('NFT collections whose tokens are mirrored'),
      })
      .prefault({}),
    icm: z.strictObject({ addresses: listedOnce(evmAddress, lowerCase).default([]) }).prefault({}),
    metrics: z
      .strictObject({
        chains: listedOnce(
          z.string().regex(/^(\d+|total|mainnet|testnet)$/, 'an EVM chain id, total, mainnet or testnet'),
        ).default([]),
        metrics: listedOnce(z.enum(CHAIN_METRICS)).default([...CHAIN_METRICS]),
        intervals: listedOnce(z.enum(METRIC_INTERVALS)).default(['day']),
      })
      .prefault({}),
    streams: listedOnce(z.string().min(1))
      .optional()
      .describe('Streams to run; all that the pipeline feeds when absent'),
    start: historyBound
      .optional()
      .describe(
        'Where history starts (UTC date, or "30d" for thirty days before each run): a first run (or --full-refresh) reads every stream whose records have a time down to it and no further',
      ),
    end: historyBound
      .optional()
      .describe(
        'Where history ends, exclusive (UTC date, or "1d" for one day before each run): with start, a backfill window; records from end on are not read',
      ),
    pageSize: z
      .record(z.string(), z.int().positive())
      .default({})
      .describe('Per-stream page size; default the maximum'),
    concurrency: z.int().min(1).max(32).default(4).describe('Partitions fetched at once'),
    flush: z
      .strictObject({
        rows: z.int().positive().default(50_000),
        bytes: z
          .int()
          .positive()
          .default(64 * 1024 * 1024),
        seconds: z.number().positive().default(60),
      })
      .prefault({}),
  })
  .superRefine((p, ctx) => {
    // The address's human-readable part names its network: one of the other network lists nothing here.
    const hrp = p.network === 'mainnet' ? 'avax' : 'fuji';
    p.primary.addresses.forEach((address, i) => {
      if (!withoutChainPrefix(address).startsWith(`${hrp}1`))
        ctx.addIssue({
          code: 'custom',
          path: ['primary', 'addresses', i],
          message: `an address of ${p.network}, the pipeline's network, starting "${hrp}1" (this one is of ${hrp === 'avax' ? 'fuji' : 'mainnet'})`,
        });
    });
    // The Metrics API's network-wide series are named by network, and the rows take the pipeline's.
    const otherSeries = p.network === 'mainnet' ? 'testnet' : 'mainnet';
    p.metrics.chains.forEach((chain, i) => {
      if (chain === otherSeries)
        ctx.addIssue({
          code: 'custom',
          path: ['metrics', 'chains', i],
          message: `an EVM chain id, total, or ${p.network === 'mainnet' ? 'mainnet' : 'testnet'} (the pipeline's network is ${p.network}; its rows would be labelled so)`,
        });
    });
  })
  .refine((p) => !isDate(p.start) || (boundAt(p.start, 0) ?? 0) <= Date.now() / 1000, {
    path: ['start'],
    error: startAfterToday,
  })
  .refine((p) => !isDate(p.start) || !isDate(p.end) || p.start < p.end, {
    path: ['end'],
    error: 'a date after start (end is exclusive: "start": "2026-01-01", "end": "2026-02-01" reads January)',
  })
  .transform((p) => ({ ...p, network: p.network === 'testnet' ? ('fuji' as const) : p.network }));

export type Pipeline = z.output<typeof PipelineSchema>;
export type PipelineInput = z.input<typeof PipelineSchema>;

const isDate = (bound: string | undefined): bound is string => bound?.includes('-') === true;

/**
 * Why a start date is refused as later than today. Today is the UTC date, as `start` is: east of UTC a
 * user's own today is a day ahead for hours, and "not after today (2028-01-01)" on their 2 January
 * reads as a broken clock. A clock before the launch (an RTC reset) is what to fix, not the start.
 */
function startAfterToday(): string {
  const today = new Date().toISOString().slice(0, 10);
  return (
    clockBeforeLaunch('a date not after today') ??
    `a date not after today in UTC (${today} UTC; start is a UTC date): history from a later day has nothing to read yet`
  );
}

/**
 * `expected`, and that this machine's clock is what to fix, when it reads a day before Avalanche's launch
 * (an RTC reset before NTP syncs): every history bound is then judged against a wrong today.
 */
function clockBeforeLaunch(expected: string): string | undefined {
  const today = new Date().toISOString().slice(0, 10);
  if (today >= EARLIEST_HISTORY) return undefined;
  return `${expected}, but this machine's clock reads ${today}, before Avalanche's launch: set the clock right`;
}

/** Unix seconds of a history bound: a UTC date's midnight, or `Nd` days before `now`'s midnight. */
function boundAt(bound: string | undefined, now: number): number | undefined {
  if (bound === undefined) return undefined;
  const days = /^(\d+)d$/.exec(bound);
  if (days) return Math.floor(now / 86_400 - Number(days[1])) * 86_400;
  return Date.parse(`${bound}T00:00:00Z`) / 1000;
}

/**
 * Unix seconds where the pipeline's history starts, if it sets one: a UTC date, or `Nd` days before
 * `now` (so a cron job keeps a rolling window).
 */
export function historyStart(
  pipeline: Pick<Pipeline, 'start'>,
  now: number = Date.now() / 1000,
): number | undefined {
  return boundAt(pipeline.start, now);
}

/**
 * Unix seconds where the pipeline's history ends (exclusive), if it sets one: records at or after it
 * are not read. A UTC date, or `Nd` days before `now`. Note: listings are sent it as `endTimestamp` as
 * is (the service's bound may be inclusive, §4.0 does not say); the walks drop records at `end`.
 */
export function historyEnd(
  pipeline: Pick<Pipeline, 'end'>,
  now: number = Date.now() / 1000,
): number | undefined {
  return boundAt(pipeline.end, now);
}
