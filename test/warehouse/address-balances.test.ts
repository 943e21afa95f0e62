import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { type BuildResult, buildWarehouse } from '../../src/warehouse/build.ts';
import { fetchJson, startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { modeOf, queryWarehouse } from '../helpers/warehouse.ts';

/**
 * address_balances_daily with a pipeline `start`: the lake lacks the UTXOs created before it, and those
 * still unspent are part of each address's balance. The newest balances snapshot opens the series
 * (address_balance_openings), so its last day is what the address holds: the sum of its unspent UTXOs
 * as the UTXO listing gives them, asset by asset.
 */

const DAY = 86_400;

let emulator: Emulator;
let dataDir: string;
let pipelinePath: string;
let addresses: string[];
let firstBuild: BuildResult;

beforeAll(async () => {
  emulator = await startEmulator();
  const start = new Date((TEST_EPOCH - 5 * DAY) * 1000).toISOString().slice(0, 10);
  const workspace = demoWorkspace(emulator, (p) => {
    p.streams = ['utxos', 'primary_balances'];
    p.start = start;
    addresses = (p.primary as { addresses: string[] }).addresses;
  });
  dataDir = workspace.dataDir;
  pipelinePath = workspace.pipelinePath;
  expect((await extractOnce(pipelinePath, dataDir)).status).toBe('ok');
  firstBuild = await buildWarehouse({ dataDir });
}, 120_000);
afterAll(() => emulator?.close());

type Held = { address: string; chain: string; asset: string; amount: string; count: string };

/** What the address holds unspent on `chain`, by asset, every page of the listing summed: the service's own answer. */
async function unspent(address: string, chain: string): Promise<Held[]> {
  const byAsset = new Map<string, { amount: bigint; count: number }>();
  let token: string | undefined;
  do {
    const query = new URLSearchParams({
      addresses: address,
      pageSize: '100',
      ...(token ? { pageToken: token } : {}),
    });
    const page = await fetchJson(`${emulator.url}/v1/networks/fuji/blockchains/${chain}/utxos?${query}`);
    for (const u of page.body.utxos as { asset: { assetId: string; amount: string } }[]) {
      const held = byAsset.get(u.asset.assetId) ?? { amount: 0n, count: 0 };
      held.amount += BigInt(u.asset.amount);
      held.count++;
      byAsset.set(u.asset.assetId, held);
    }
    token = page.body.nextPageToken;
  } while (token);
  return [...byAsset].map(([asset, held]) => ({
    address,
    chain,
    asset,
    amount: String(held.amount),
    count: String(held.count),
  }));
}

const byKey = (a: Held, b: Held) =>
  `${a.address}/${a.chain}/${a.asset}`.localeCompare(`${b.address}/${b.chain}/${b.asset}`);

/** The last day of every address, chain and asset holding something, as the mart ends it. */
const lastDays = async () =>
  (await queryWarehouse(
    dataDir,
    `select address, chain, asset_id as asset, cast(balance_amount as varchar) as amount,
        cast(count_utxos as varchar) as count
     from address_balances_daily
     qualify balance_day = max(balance_day) over (partition by address, chain)
        and (balance_amount <> 0 or count_utxos <> 0)`,
  )) as Held[];

/** What the service's UTXO listing says every configured address holds, on both chains. */
async function heldNow(): Promise<Held[]> {
  const want: Held[] = [];
  for (const address of addresses)
    for (const chain of ['p-chain', 'x-chain'])
      want.push(...(await unspent(address.replace(/^[PX]-/, ''), chain)));
  return want;
}

it('ends each address on what it holds, every asset, UTXOs from before `start` included', async () => {
  const last = await lastDays();
  expect(new Set(last.map((row) => row.chain))).toEqual(new Set(['p-chain', 'x-chain']));
  const want = await heldNow();
  expect(want.length).toBeGreaterThanOrEqual(addresses.length);
  expect(last.sort(byKey)).toEqual(want.sort(byKey));

  // The lake alone, what the series would end on without the openings: short for some address, which
  // holds UTXOs older than `start`.
  const lakeOnly = await queryWarehouse(
    dataDir,
    `select owner as address, chain, asset_id as asset, cast(sum(amount_navax) as varchar) as amount
     from stg_utxos, unnest(addresses) as t(owner)
     where consumed_at is null group by all`,
  );
  const short = last.filter(
    (row) =>
      lakeOnly.find((l) => l.address === row.address && l.chain === row.chain && l.asset === row.asset)
        ?.amount !== row.amount,
  );
  expect(short.length).toBeGreaterThan(0);
  expect(modeOf(firstBuild, 'address_balance_openings')).toBe('full');
});

it('is kept by the next cron build while the openings are the same, though the snapshot was confirmed again', async () => {
  const before = await queryWarehouse(dataDir, 'select * from address_balances_daily order by all');
  const run = await extractOnce(pipelinePath, dataDir);
  expect(run.status).toBe('ok');
  // Nothing new: the UTXO walks found no row, and the balances were confirmed as they were.
  expect(run.partitions.reduce((n, p) => n + p.rows, 0)).toBe(0);
  const next = await buildWarehouse({ dataDir });
  expect(modeOf(next, 'stg_primary_balances')).toBe('incremental');
  expect(modeOf(next, 'address_balance_openings')).toBe('unchanged');
  expect(modeOf(next, 'address_balances_daily')).toBe('unchanged');
  expect(await queryWarehouse(dataDir, 'select * from address_balances_daily order by all')).toEqual(before);
});

it('ends on what each address holds when the service’s clock is ahead of avalake’s', async () => {
  // UTXOs created after avalake's run began, by its clock (a local clock behind, or a long run): the
  // snapshot's time is the run's start, so the opening must not be measured against it.
  emulator.advance(Math.floor(Date.now() / 1000) + 2 * DAY - Math.floor(emulator.clock.now()));
  expect((await extractOnce(pipelinePath, dataDir)).status).toBe('ok');
  await buildWarehouse({ dataDir });
  expect((await lastDays()).sort(byKey)).toEqual((await heldNow()).sort(byKey));
}, 120_000);
