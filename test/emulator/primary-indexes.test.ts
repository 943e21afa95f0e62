import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { evmChainsOf } from '../../src/emulator/world/chains.ts';
import { CURRENCY_RATES } from '../../src/emulator/world/prices.ts';
import type { PrimaryNetwork, TxRec, UtxoRec } from '../../src/emulator/world/primary/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

// Every filtered listing of the primary routes equals the same filter applied to the whole history,
// in both orders and across page boundaries; and a page reads O(page + log n) records, never a copy
// of the history.

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const now = () => Math.floor(emu.clock.now());
const truth = () => emu.truth.primary('mainnet');
const url = (path: string, query: Record<string, string | number> = {}) => {
  const u = new URL(`${emu.url}/v1/networks/mainnet${path}`);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
  return u.toString();
};
const wallet = (i: number) => truth().wallets()[i]?.address as string;

/** Walks a listing in both orders with a small page size; returns the ascending order of `key`. */
async function bothWays(path: string, query: Record<string, string | number>, field: string, key: string) {
  const desc = await walk(url(path, { ...query, pageSize: 3 }), field);
  const asc = await walk(url(path, { ...query, pageSize: 4, sortOrder: 'asc' }), field);
  const ascKeys = asc.items.map((x) => x[key]);
  expect(desc.items.map((x) => x[key])).toEqual([...ascKeys].reverse());
  return ascKeys;
}

describe('filtered listings equal the filter over the whole history', () => {
  it('transactions by several addresses, types and a time window', async () => {
    const [a, b] = [wallet(1), wallet(4)];
    const start = emu.truth.genesis + 3 * 86_400;
    const end = now() - 2 * 86_400;
    const types = ['BaseTx', 'AddPermissionlessDelegatorTx'];
    const got = await bothWays(
      '/blockchains/p-chain/transactions',
      { addresses: `${a},${b}`, txTypes: types.join(','), startTimestamp: start, endTimestamp: end },
      'transactions',
      'txHash',
    );
    const expected = truth()
      .transactions('p', now())
      .filter(
        (tx) =>
          (tx.parties.includes(a) || tx.parties.includes(b)) &&
          types.includes(tx.type) &&
          tx.time >= start &&
          tx.time <= end,
      )
      .map((tx) => tx.hash);
    expect(expected.length).toBeGreaterThan(3);
    expect(got).toEqual(expected);
  });

  it('staking transactions of an address, also by type; transactions of an L1 validation', async () => {
    const owner = truth().nodes()[1]?.owner as string;
    const staking = new Set([
      'AddValidatorTx',
      'AddPermissionlessValidatorTx',
      'AddDelegatorTx',
      'AddPermissionlessDelegatorTx',
      'AddSubnetValidatorTx',
    ]);
    const all = truth().transactions('p', now());
    const got = await bothWays(
      '/blockchains/p-chain/transactions:listStaking',
      { addresses: owner },
      'transactions',
      'txHash',
    );
    expect(got).toEqual(
      all.filter((tx) => staking.has(tx.type) && tx.parties.includes(owner)).map((t) => t.hash),
    );
    const delegations = await bothWays(
      '/blockchains/p-chain/transactions:listStaking',
      { txTypes: 'AddPermissionlessDelegatorTx,BaseTx' },
      'transactions',
      'txHash',
    );
    expect(delegations).toEqual(
      all.filter((tx) => tx.type === 'AddPermissionlessDelegatorTx').map((t) => t.hash),
    );
    const validation = truth().l1Validators(now())[0]?.validator.validationId as string;
    const ofValidation = await bothWays(
      '/blockchains/p-chain/transactions',
      { l1ValidationId: validation },
      'transactions',
      'txHash',
    );
    expect(ofValidation).toEqual(
      all.filter((tx) => tx.l1?.validators.some((v) => v.validationId === validation)).map((t) => t.hash),
    );
    expect(ofValidation.length).toBeGreaterThan(0);
  });

  it('UTXOs of several addresses by amount and by time, spent or not, above a minimum', async () => {
    const [a, b] = [wallet(0), wallet(2)];
    const t = now();
    const mine = (chain: 'p' | 'x') =>
      [...truth().utxosOf(a, chain, t), ...truth().utxosOf(b, chain, t)].filter((u) => u.createdAt <= t);
    const unspent = (u: UtxoRec) => !u.spent || u.spent.at > t;
    const byAmount = (x: UtxoRec, y: UtxoRec) =>
      x.amount < y.amount ? -1 : x.amount > y.amount ? 1 : x.seq - y.seq;
    const min = 50n * 1_000_000_000n;
    for (const chain of ['p', 'x'] as const) {
      const ids = (list: UtxoRec[]) => list.map((u) => u.id);
      const path = `/blockchains/${chain}-chain/utxos`;
      const cases: [Record<string, string | number>, UtxoRec[]][] = [
        [{ sortBy: 'amount' }, mine(chain).filter(unspent).sort(byAmount)],
        [{ sortBy: 'amount', includeSpent: 'true' }, mine(chain).sort(byAmount)],
        [
          { sortBy: 'amount', minUtxoAmount: String(min) },
          mine(chain)
            .filter((u) => unspent(u) && u.amount >= min)
            .sort(byAmount),
        ],
        [
          {},
          mine(chain)
            .filter(unspent)
            .sort((x, y) => x.seq - y.seq),
        ],
        [{ includeSpent: 'true' }, mine(chain).sort((x, y) => x.seq - y.seq)],
      ];
      for (const [query, expected] of cases) {
        const got = await bothWays(path, { addresses: `${a},${b}`, ...query }, 'utxos', 'utxoId');
        expect(got, `${chain} ${JSON.stringify(query)}`).toEqual(ids(expected));
      }
    }
    // Every address of the chain, by amount: the unspent ones.
    const everyone = await walk(
      url('/blockchains/p-chain/utxos', { sortBy: 'amount', pageSize: 100 }),
      'utxos',
    );
    expect(everyone.items.map((u) => u.utxoId)).toEqual(
      truth()
        .utxos('p', t)
        .filter(unspent)
        .sort(byAmount)
        .reverse()
        .map((u) => u.id),
    );
  });

  it('UTXOs spent after an earlier time are unspent as of it, until the clock passes the spend', async () => {
    const a = wallet(3);
    const before = now();
    const unspentNow = (
      await walk(url('/blockchains/p-chain/utxos', { addresses: a, pageSize: 100 }), 'utxos')
    ).items;
    emu.advance(2 * 86_400);
    const t = now();
    const later = (await walk(url('/blockchains/p-chain/utxos', { addresses: a, pageSize: 100 }), 'utxos'))
      .items;
    const expected = truth()
      .utxosOf(a, 'p', t)
      .filter((u) => u.createdAt <= t && (!u.spent || u.spent.at > t));
    expect(later.map((u) => u.utxoId)).toEqual(expected.map((u) => u.id).reverse());
    const spentSince = truth()
      .utxosOf(a, 'p', t)
      .filter((u) => u.createdAt <= before && u.spent && u.spent.at > before && u.spent.at <= t);
    expect(spentSince.length).toBeGreaterThan(0);
    for (const u of spentSince) expect(unspentNow.some((x) => x.utxoId === u.id)).toBe(true);
  });

  it('rewards by address and node together; delegators by address and state', async () => {
    const node = truth().nodes()[0]?.nodeId as string;
    const owners = [
      ...new Set(
        truth()
          .rewards(now())
          .filter((r) => r.stake.nodeId === node)
          .map((r) => r.utxo.addresses[0] as string),
      ),
    ].slice(0, 3);
    const got = await bothWays(
      '/rewards',
      { addresses: owners.join(','), nodeIds: node },
      'historicalRewards',
      'utxoId',
    );
    const expected = truth()
      .rewards(now())
      // A reward with several owners is listed for any of them.
      .filter((r) => r.stake.nodeId === node && r.utxo.addresses.some((a) => owners.includes(a)))
      .map((r) => r.utxo.id);
    expect(expected.length).toBeGreaterThan(1);
    expect(got).toEqual(expected);
    const addresses = [wallet(5), wallet(6), wallet(7)];
    for (const status of [undefined, 'pending', 'active', 'completed'] as const) {
      const query = { rewardAddresses: addresses.join(','), ...(status ? { delegationStatus: status } : {}) };
      const listed = await bothWays('/delegators', query, 'delegators', 'txHash');
      expect(listed, String(status)).toEqual(
        truth()
          .delegations(now(), status)
          .filter((d) => d.rewardAddresses.some((a) => addresses.includes(a)))
          .map((d) => d.tx.hash),
      );
    }
  });

  it('node blocks in a time window', async () => {
    const node = truth().nodes()[3]?.nodeId as string;
    const start = emu.truth.genesis + 5 * 86_400;
    const end = now() - 86_400;
    const { items } = await walk(
      url(`/blockchains/p-chain/nodes/${node}/blocks`, {
        startTimestamp: start,
        endTimestamp: end,
        pageSize: 7,
      }),
      'blocks',
    );
    const expected = truth()
      .blocks(now())
      .filter((b) => b.proposer === node && b.time >= start && b.time <= end)
      .reverse();
    expect(expected.length).toBeGreaterThan(7);
    expect(items.map((b) => b.blockHash)).toEqual(expected.map((b) => b.hash));
  });
});

describe('a page costs O(page + log n)', () => {
  it('reads a bounded number of records per page and never copies the history', async () => {
    const primary = truth();
    const copies = [
      'transactions',
      'utxos',
      'rewards',
      'delegations',
      'blocks',
      'vertices',
      'stakes',
    ] as const;
    const copySpies = copies.map((m) => vi.spyOn(primary, m));
    const reads = {
      tx: vi.spyOn(primary, 'tx'),
      block: vi.spyOn(primary, 'block'),
      reward: vi.spyOn(primary, 'reward'),
      delegation: vi.spyOn(primary, 'delegation'),
    };
    const n = primary.txCount('p', now());
    const bound = (pageSize: number, lists = 1) => pageSize + 1 + lists * 4 * Math.ceil(Math.log2(n + 1));
    const readsOf = async (
      spy: { mock: { calls: unknown[] } },
      path: string,
      query: Record<string, string | number>,
    ) => {
      const before = spy.mock.calls.length;
      const res = await fetchJson(url(path, query));
      expect(res.status, path).toBe(200);
      return spy.mock.calls.length - before;
    };
    // A sparse type (one CreateChainTx per chain) in the whole P-Chain history.
    expect(
      await readsOf(reads.tx, '/blockchains/p-chain/transactions', {
        addresses: wallet(0),
        txTypes: 'CreateChainTx',
        pageSize: 1,
      }),
    ).toBeLessThanOrEqual(bound(1));
    expect(await readsOf(reads.tx, '/blockchains/p-chain/transactions', { pageSize: 5 })).toBeLessThanOrEqual(
      bound(5),
    );
    const node = primary.nodes()[4]?.nodeId as string;
    expect(
      await readsOf(reads.block, `/blockchains/p-chain/nodes/${node}/blocks`, { pageSize: 5 }),
    ).toBeLessThanOrEqual(bound(5));
    expect(await readsOf(reads.reward, '/rewards', { nodeIds: node, pageSize: 5 })).toBeLessThanOrEqual(
      bound(5),
    );
    // Pending delegations are the newest few: their page does not walk the completed history.
    expect(
      await readsOf(reads.delegation, '/delegators', { delegationStatus: 'pending', pageSize: 2 }),
    ).toBeLessThan(primary.delegationCount(now()) / 4);
    await fetchJson(url('/blockchains/p-chain/utxos', { sortBy: 'amount', pageSize: 5 }));
    await fetchJson(url('/blockchains/p-chain/balances', { addresses: wallet(0) }));
    for (const [method, params] of [
      ['platform.getCurrentValidators', {}],
      ['platform.getBlockByHeight', { height: 5, encoding: 'json' }],
      ['platform.getCurrentSupply', {}],
      ['platform.getHeight', {}],
    ] as const) {
      const rpc = await fetchJson(`${emu.url}/ext/bc/P`, {
        method: 'POST',
        body: { jsonrpc: '2.0', id: 1, method, params },
      });
      expect(rpc.body.result, method).toBeDefined();
    }
    for (const [i, m] of copies.entries()) expect(copySpies[i]?.mock.calls.length, m).toBe(0);
    vi.restoreAllMocks();
  });
});

describe('time, the C-Chain and money', () => {
  const monotonic = (label: string, times: number[]) => {
    const back = times.findIndex((t, i) => i > 0 && t < (times[i - 1] as number));
    expect(back, `${label}: time goes back at ${back}`).toBe(-1);
  };
  const checkTimes = (primary: PrimaryNetwork, t: number) => {
    monotonic(
      'P blocks',
      primary.blocks(t).map((b) => b.time),
    );
    for (const chain of ['p', 'x', 'c'] as const)
      monotonic(
        `${chain} txs`,
        primary.transactions(chain, t).map((tx) => tx.time),
      );
    monotonic(
      'X vertices',
      primary.vertices(t).map((v) => v.time),
    );
    const blocks = primary.blocks(t);
    for (const b of blocks.slice(1)) expect(b.parent).toBe(blocks[b.height - 1]?.hash);
  };

  it('P- and X-Chain history never goes back in time (small and medium)', async () => {
    checkTimes(truth(), now());
    const medium = await startEmulator({ scale: 'medium' });
    try {
      for (const network of ['mainnet', 'fuji'] as const)
        checkTimes(medium.truth.primary(network), Math.floor(medium.clock.now()));
      // Newest first really is newest first: the first page's times never rise.
      const page = await fetchJson(
        `${medium.url}/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=100&sortOrder=asc`,
      );
      monotonic(
        'medium listing',
        page.body.transactions.map((t: any) => t.blockTimestamp),
      );
    } finally {
      await medium.close();
    }
  });

  it('C-Chain atomic transactions sit in the EVM C-Chain block of their time', async () => {
    const cChain = emu.truth.evm.chain('43114');
    if (!cChain) throw new Error('no C-Chain');
    const txs = truth().transactions('c', now());
    expect(txs.length).toBeGreaterThan(10);
    for (const tx of txs) {
      const block = cChain.block(tx.block);
      expect(block.blockHash).toBe(tx.blockHash);
      expect(block.blockTimestamp).toBe(tx.time);
    }
    const someone = txs.at(-1)?.evmInputs?.[0]?.address ?? txs.at(-1)?.evmOutputs?.[0]?.address;
    const listed = await fetchJson(
      url('/blockchains/c-chain/transactions', { addresses: someone as string }),
    );
    const first = listed.body.transactions[0];
    const block = cChain.block(first.blockHeight);
    expect(first.blockHash).toBe(block.blockHash);
    expect(first.timestamp).toBe(block.blockTimestamp);
    expect(first.blockHeight).toBeLessThanOrEqual(cChain.head(now()));
  });

  it('creates each L1 chain on the P-Chain exactly when its EVM chain begins', () => {
    const genesis = emu.truth.genesis;
    const all = truth().transactions('p', now());
    for (const chain of evmChainsOf(emu.truth.seed, 'mainnet').filter((c) => c.validatorSet !== 'primary')) {
      const createChain = all.filter(
        (tx) => tx.type === 'CreateChainTx' && tx.blockchain?.id === chain.blockchainId,
      );
      expect(createChain.map((tx) => tx.time)).toEqual([genesis + chain.createdAfterGenesis]);
      expect(truth().createdAt(chain.blockchainId, now())).toBe(genesis + chain.createdAfterGenesis);
      const subnet = all.find(
        (tx) => tx.type === 'CreateSubnetTx' && tx.subnetId === chain.subnetId,
      ) as TxRec;
      expect(subnet.time).toBeLessThan(genesis + chain.createdAfterGenesis);
      expect(truth().createdAt(chain.blockchainId, genesis + chain.createdAfterGenesis - 1)).toBeUndefined();
    }
    const convert = all.find((tx) => tx.type === 'ConvertSubnetToL1Tx') as TxRec;
    const l1 = evmChainsOf(emu.truth.seed, 'mainnet').find((c) => c.validatorSet === 'l1');
    expect(convert.time).toBeGreaterThan(genesis + (l1?.createdAfterGenesis ?? 0));
  });

  it('prices rewards with the same currency rates as the EVM routes', async () => {
    const node = truth().nodes()[1]?.nodeId as string;
    const page = (currency: string) =>
      fetchJson(url('/rewards', { nodeIds: node, pageSize: 5, currency })).then(
        (r) => r.body.historicalRewards,
      );
    const [usd, czk, huf] = await Promise.all([page('usd'), page('czk'), page('huf')]);
    usd.forEach((r: any, i: number) => {
      const value = r.reward.historicalPrice.value;
      expect(czk[i].reward.historicalPrice).toEqual({
        currencyCode: 'czk',
        value: Math.round(value * CURRENCY_RATES.czk * 1e6) / 1e6,
      });
      expect(huf[i].reward.historicalPrice.value).toBeCloseTo(value * CURRENCY_RATES.huf, 6);
    });
  });
});
