import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

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

describe('primary network listings', () => {
  it('walks every P-Chain transaction exactly once, newest first, and asc reverses it', async () => {
    const expected = truth()
      .transactions('p', now())
      .map((tx) => tx.hash);
    const desc = await walk(url('/blockchains/p-chain/transactions', { pageSize: 100 }), 'transactions');
    expect(desc.items.map((t) => t.txHash)).toEqual([...expected].reverse());
    const asc = await walk(
      url('/blockchains/p-chain/transactions', { pageSize: 100, sortOrder: 'asc' }),
      'transactions',
    );
    expect(asc.items.map((t) => t.txHash)).toEqual(expected);
    expect(new Set(['VALIDATOR', 'DELEGATOR', 'VALIDATOR_FEE'])).toEqual(
      new Set(
        truth()
          .rewards(now())
          .map((r) => r.utxo.rewardType),
      ),
    );
  });

  it('filters by address, txTypes and time on X and C, accepting 0x for the C-Chain', async () => {
    const wallet = truth().wallets()[3];
    if (!wallet) throw new Error('no wallet');
    const xs = await walk(
      url('/blockchains/x-chain/transactions', { addresses: `X-${wallet.address}`, pageSize: 7 }),
      'transactions',
    );
    const expected = truth()
      .transactions('x', now())
      .filter((tx) => tx.parties.includes(wallet.address));
    expect(xs.items.map((t) => t.txHash)).toEqual(expected.map((t) => t.hash).reverse());
    expect(xs.items[0].chainFormat).toBe('non-linear');
    const cs = await walk(
      url('/blockchains/c-chain/transactions', { addresses: wallet.evmAddress, pageSize: 100 }),
      'transactions',
    );
    const cExpected = truth()
      .transactions('c', now())
      .filter((tx) => tx.parties.includes(wallet.evmAddress));
    expect(cs.items.map((t) => t.txHash)).toEqual(cExpected.map((t) => t.hash).reverse());
    const exports = await walk(
      url('/blockchains/p-chain/transactions', {
        addresses: wallet.address,
        txTypes: 'ExportTx',
        pageSize: 100,
      }),
      'transactions',
    );
    expect(exports.items.every((t) => t.txType === 'ExportTx' && t.destinationChain)).toBe(true);
  });

  it('answers 400 naming the parameter for each rule', async () => {
    const cases: [string, Record<string, string | number>, string][] = [
      ['/blockchains/p-chain/transactions', { txTypes: 'BaseTx' }, 'txTypes'],
      ['/blockchains/p-chain/transactions', { startTimestamp: 1 }, 'startTimestamp'],
      ['/blockchains/p-chain/transactions', { pageSize: 101 }, 'pageSize'],
      ['/blockchains/p-chain/transactions', { sortOrder: 'up' }, 'sortOrder'],
      ['/blockchains/p-chain/transactions', { addresses: 'avax1nope' }, 'addresses'],
      ['/blockchains/x-chain/transactions:listStaking', {}, 'blockchainId'],
      ['/blockchains/c-chain/vertices', {}, 'blockchainId'],
      ['/blockchains/p-chain/utxos', { sortBy: 'size' }, 'sortBy'],
      ['/blockchains/p-chain/utxos', { minUtxoAmount: -1 }, 'minUtxoAmount'],
      ['/blockchains/p-chain/utxos', { includeSpent: 'yes' }, 'includeSpent'],
      ['/rewards', {}, 'addresses'],
      ['/rewards', { nodeIds: 'NodeID-bad' }, 'nodeIds'],
      ['/rewards', { nodeIds: truth().nodes()[0]?.nodeId ?? '', currency: 'btc' }, 'currency'],
      ['/delegators', { delegationStatus: 'done' }, 'delegationStatus'],
      ['/blockchains/p-chain/nodes/NodeID-x/blocks', {}, 'nodeId'],
    ];
    for (const [path, query, name] of cases) {
      const res = await fetchJson(url(path, query));
      expect(res.status, `${path} ${JSON.stringify(query)}`).toBe(400);
      expect(JSON.stringify(res.body.message)).toContain(name);
    }
    const badNetwork = await fetchJson(`${emu.url}/v1/networks/devnet/delegators`);
    expect(badNetwork.status).toBe(400);
  });

  it('rewards equal their reward UTXOs and RewardValidatorTx', async () => {
    // A node some of whose periods were rewarded (a node's periods may all have fallen short of uptime).
    const node = truth()
      .nodes()
      .find(
        (n) =>
          truth()
            .rewards(now())
            .filter((r) => r.stake.nodeId === n.nodeId).length > 1,
      );
    if (!node) throw new Error('no rewarded node');
    const { items } = await walk(
      url('/rewards', { nodeIds: node.nodeId, pageSize: 5, sortOrder: 'asc' }),
      'historicalRewards',
    );
    const expected = truth()
      .rewards(now())
      .filter((r) => r.stake.nodeId === node.nodeId);
    expect(items.map((r) => r.utxoId)).toEqual(expected.map((r) => r.utxo.id));
    expect(items.length).toBeGreaterThan(0);
    const pTxs = new Map(
      truth()
        .transactions('p', now())
        .map((tx) => [tx.hash, tx]),
    );
    for (const r of items) {
      const rewardTx = pTxs.get(r.rewardTxHash);
      expect(rewardTx?.type).toBe('RewardValidatorTx');
      const utxo = rewardTx?.emitted.find((u) => u.id === r.utxoId);
      expect(utxo?.amount.toString()).toBe(r.reward.amount);
      expect(utxo?.addresses).toEqual(r.addresses);
      expect(pTxs.get(r.txHash)?.stake?.amount.toString()).toBe(r.amountStaked);
    }
    // The same reward, seen through the owner's UTXOs.
    const owner = items[0].addresses[0];
    const utxos = await walk(
      url('/blockchains/p-chain/utxos', { addresses: owner, includeSpent: 'true', pageSize: 100 }),
      'utxos',
    );
    const found = utxos.items.find((u) => u.utxoId === items[0].utxoId);
    expect(found).toMatchObject({ amount: items[0].reward.amount, rewardType: items[0].rewardType });
  });

  it('lists delegations in all three states, with rewards matching their UTXOs, and moves them with the clock', async () => {
    const byStatus: Record<string, any[]> = {};
    for (const status of ['pending', 'active', 'completed']) {
      byStatus[status] = (
        await walk(url('/delegators', { delegationStatus: status, pageSize: 100 }), 'delegators')
      ).items;
      expect(byStatus[status]?.length, status).toBeGreaterThan(0);
      expect(byStatus[status]?.length).toBe(truth().delegations(now(), status as 'pending').length);
    }
    const paid = new Map<string, { net: bigint; fee: bigint | undefined }>();
    for (const r of truth().rewards(now()))
      if (r.stake.kind === 'delegator') {
        const p = paid.get(r.stake.tx.hash) ?? { net: 0n, fee: undefined };
        paid.set(r.stake.tx.hash, p);
        if (r.utxo.rewardType === 'DELEGATOR') p.net += r.utxo.amount;
        else p.fee = (p.fee ?? 0n) + r.utxo.amount;
      }
    const stakes = new Map(
      truth()
        .stakes(now())
        .map((s) => [s.tx.hash, s]),
    );
    let unpaid = 0;
    let feeDue = 0;
    for (const d of byStatus.completed ?? []) {
      const p = paid.get(d.txHash) ?? { net: 0n, fee: undefined };
      // A delegation whose validator fell short of uptime is paid nothing: no reward UTXO, rewards of 0.
      expect(p.net.toString(), d.txHash).toBe(d.netReward);
      if (p.net === 0n) unpaid++;
      // Its fee goes to the validator when the validator's period ends, not with the delegation's reward.
      const validatorPaid = (stakes.get(d.txHash)?.validator?.rewardTx?.time ?? Infinity) <= now();
      if (p.net > 0n && !validatorPaid) feeDue++;
      expect(p.fee === undefined ? undefined : String(p.fee), d.txHash).toBe(
        validatorPaid && p.net > 0n ? String(BigInt(d.grossReward) - p.net) : undefined,
      );
    }
    expect(feeDue).toBeGreaterThan(0);
    expect(unpaid).toBeGreaterThan(0);
    expect(unpaid).toBeLessThan((byStatus.completed ?? []).length / 2);
    const pending = byStatus.pending?.[0];
    emu.advance(pending.startTimestamp - now() + 1);
    const after = await walk(url('/delegators', { delegationStatus: 'active', pageSize: 100 }), 'delegators');
    expect(after.items.some((d) => d.txHash === pending.txHash)).toBe(true);
  });

  it('balances equal the sums of UTXOs, now and in the past', async () => {
    const wallet = truth().wallets()[0]?.address as string;
    const t = now();
    const res = await fetchJson(url('/blockchains/p-chain/balances', { addresses: wallet }));
    expect(res.status).toBe(200);
    const utxos = await walk(
      url('/blockchains/p-chain/utxos', { addresses: wallet, pageSize: 100 }),
      'utxos',
    );
    const sum = (f: (u: any) => boolean) => utxos.items.filter(f).reduce((s, u) => s + BigInt(u.amount), 0n);
    const local = (u: any) => u.createdOnChainId === u.consumedOnChainId;
    const unlocked = sum((u) => local(u) && !u.staked);
    expect(res.body.balances.unlockedUnstaked[0]?.amount ?? '0').toBe(unlocked.toString());
    const staked = sum((u) => u.staked && u.utxoStartTimestamp <= t);
    expect(res.body.balances.unlockedStaked[0]?.amount ?? '0').toBe(staked.toString());
    const past = t - 20 * 86_400;
    const then = await fetchJson(
      url('/blockchains/p-chain/balances', { addresses: wallet, blockTimestamp: past }),
    );
    expect(then.body.balances.unlockedUnstaked[0]?.amount ?? '0').toBe(
      truth().balances('p', [wallet], past).unlockedUnstaked.amount.toString(),
    );
    expect(res.body.chainInfo).toEqual({ chainName: 'p-chain', network: 'mainnet' });
  });

  it('sorts UTXOs by amount and walks them once', async () => {
    const wallet = truth().wallets()[2]?.address as string;
    const { items } = await walk(
      url('/blockchains/p-chain/utxos', {
        addresses: wallet,
        sortBy: 'amount',
        sortOrder: 'asc',
        includeSpent: 'true',
        pageSize: 9,
      }),
      'utxos',
    );
    const amounts = items.map((u) => BigInt(u.amount));
    expect(amounts).toEqual([...amounts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(items.map((u) => u.utxoId)).size).toBe(items.length);
    expect(items.length).toBe(
      truth()
        .utxosOf(wallet, 'p', now())
        .filter((u) => u.createdAt <= now()).length,
    );
  });

  it('lists node blocks and vertices, newest first', async () => {
    const node = truth().nodes()[2]?.nodeId as string;
    const { items } = await walk(
      url(`/blockchains/p-chain/nodes/${node}/blocks`, { pageSize: 50 }),
      'blocks',
    );
    const expected = truth()
      .blocks(now())
      .filter((b) => b.proposer === node)
      .reverse();
    expect(items.map((b) => b.blockHash)).toEqual(expected.map((b) => b.hash));
    const vertices = await walk(url('/blockchains/x-chain/vertices', { pageSize: 100 }), 'vertices');
    expect(vertices.items.map((v) => v.vertexIndex)).toEqual(
      truth()
        .vertices(now())
        .map((v) => v.index)
        .reverse(),
    );
  });

  it('keeps a walk exact while the world grows between pages, and guards its tokens', async () => {
    const first = await fetchJson(url('/blockchains/p-chain/transactions', { pageSize: 50 }));
    const seen: string[] = first.body.transactions.map((t: any) => t.txHash);
    const startCount = truth().transactions('p', now()).length;
    emu.advance(6 * 3600);
    let token = first.body.nextPageToken;
    while (token) {
      const next = await fetchJson(
        url('/blockchains/p-chain/transactions', { pageSize: 50, pageToken: token }),
      );
      seen.push(...next.body.transactions.map((t: any) => t.txHash));
      token = next.body.nextPageToken;
    }
    expect(seen.length).toBe(startCount);
    expect(new Set(seen).size).toBe(seen.length);
    const foreign = await fetchJson(
      url('/blockchains/x-chain/transactions', { pageToken: first.body.nextPageToken }),
    );
    expect(foreign.status).toBe(400);
    const fresh = await fetchJson(url('/blockchains/p-chain/transactions', { pageSize: 50 }));
    emu.advance(24 * 3600 + 1);
    const expired = await fetchJson(
      url('/blockchains/p-chain/transactions', { pageSize: 50, pageToken: fresh.body.nextPageToken }),
    );
    expect(expired.status).toBe(400);
    expect(expired.body.message).toContain('expired');
  });
});

describe('determinism', () => {
  it('gives identical bytes for the same seed and clock', async () => {
    const [a, b] = await Promise.all([startEmulator({ seed: 11 }), startEmulator({ seed: 11 })]);
    try {
      for (const path of [
        '/v1/networks/fuji/blockchains/p-chain/transactions?pageSize=100',
        '/v1/networks/fuji/delegators?pageSize=100',
      ]) {
        const [x, y] = await Promise.all([fetchJson(a.url + path), fetchJson(b.url + path)]);
        expect(JSON.stringify(x.body)).toBe(JSON.stringify(y.body));
        expect(x.body.nextPageToken).toBeDefined();
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
