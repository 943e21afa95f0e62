import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { Network } from '../../src/emulator/world/networks.ts';
import { type StakeRec, utxoState } from '../../src/emulator/world/primary/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

// Issue 15.1: the UTXO listing (§4.4), the balances (§4.3) and the node's platform.getBalance agree on
// every UTXO's state, for every wallet of the world, before, during and after staking periods.

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const DAY = 86_400;
const NETWORKS: readonly Network[] = ['mainnet', 'fuji'];
const now = () => Math.floor(emu.clock.now());

// biome-ignore lint/suspicious/noExplicitAny: answers are read as the client reads JSON
type Listed = Record<string, any>;
type Tally = { amount: string; utxoCount: number };

/** A listed P-Chain UTXO's state as a client reads it from its fields (api-surfaces.md §2.2). */
function listedState(u: Listed, t: number): string {
  if (u.consumingTxHash !== undefined) return 'spent';
  if (u.createdOnChainId !== u.consumedOnChainId) return 'atomic';
  if (!u.staked) return 'unlockedUnstaked';
  return u.utxoStartTimestamp > t ? 'pendingStaked' : 'unlockedStaked';
}

const tally = (utxos: readonly Listed[]): Tally => ({
  amount: String(utxos.reduce((s, u) => s + BigInt(u.asset.amount), 0n)),
  utxoCount: utxos.length,
});
/** A §4.3 category (one AVAX entry, or none) as a tally. */
const category = (entries: { amount: string; utxoCount: number }[]): Tally => ({
  amount: entries[0]?.amount ?? '0',
  utxoCount: entries[0]?.utxoCount ?? 0,
});
/** Atomic memory by the chain it is shared with: from §4.3's entries, or from listed UTXOs. */
const atomicOf = (entries: { sharedWithChainId: string; amount: string; utxoCount: number }[]) =>
  Object.fromEntries(entries.map((e) => [e.sharedWithChainId, { amount: e.amount, utxoCount: e.utxoCount }]));
/** Items by a key of each (Object.groupBy is not in Node 20). */
function groupBy(items: readonly Listed[], key: (u: Listed) => string): Record<string, Listed[]> {
  const groups: Record<string, Listed[]> = {};
  for (const u of items) {
    const group = groups[key(u)] ?? [];
    groups[key(u)] = group;
    group.push(u);
  }
  return groups;
}
const atomicListed = (utxos: readonly Listed[]) =>
  Object.fromEntries(
    Object.entries(groupBy(utxos, (u) => u.createdOnChainId)).map(([chain, us]) => [chain, tally(us)]),
  );

/** What the run met, so that the test fails if the times chosen stop covering every state. */
const seen = new Map<string, number>();
const see = (what: string, n = 1) => seen.set(what, (seen.get(what) ?? 0) + n);

async function checkWallet(network: Network, address: string, t: number) {
  const base = `${emu.url}/v1/networks/${network}/blockchains`;
  const rpcUrl = `${emu.url}${network === 'mainnet' ? '' : `/${network}`}/ext/bc/P`;
  const primary = emu.truth.primary(network);

  // §4.4 with spent ones: every UTXO ever created by t, each in the world's state at t.
  const all = (
    await walk(`${base}/p-chain/utxos?addresses=${address}&pageSize=100&includeSpent=true`, 'utxos')
  ).items;
  const world = primary.utxosOf(address, 'p', t).filter((u) => utxoState(u, t) !== 'unborn');
  expect(new Map(all.map((u) => [u.utxoId, listedState(u, t)]))).toEqual(
    new Map(world.map((u) => [u.id, utxoState(u, t)])),
  );
  for (const u of all) {
    // The point of 15.1: a stake is staked until its period ends, and not a second longer.
    if (u.staked) expect(u.utxoEndTimestamp, `${u.utxoId} at ${t}`).toBeGreaterThan(t);
    expect(u.utxoType).toBe(u.staked ? 'STAKE' : 'TRANSFER');
  }

  // §4.4 as clients call it (unspent only): the same UTXOs less the spent ones.
  const listed = (await walk(`${base}/p-chain/utxos?addresses=${address}&pageSize=100`, 'utxos')).items;
  expect(listed.map((u) => u.utxoId).sort()).toEqual(
    all
      .filter((u) => listedState(u, t) !== 'spent')
      .map((u) => u.utxoId)
      .sort(),
  );
  const byState = groupBy(listed, (u) => listedState(u, t));
  for (const [state, us] of Object.entries(byState)) see(state, us.length);
  see('stake returned, unspent', listed.filter((u) => u.utxoEndTimestamp <= t).length);

  // §4.3: each category is the listing's UTXOs in that state.
  const balances = (await fetchJson(`${base}/p-chain/balances?addresses=${address}`)).body.balances;
  for (const state of ['unlockedUnstaked', 'unlockedStaked', 'pendingStaked'])
    expect(category(balances[state]), `${network} ${address} ${state} at ${t}`).toEqual(
      tally(byState[state] ?? []),
    );
  expect(atomicOf(balances.atomicMemoryUnlocked)).toEqual(atomicListed(byState.atomic ?? []));

  // platform.getBalance: the unlocked ones, to the UTXO.
  const rpc = (
    await fetchJson(rpcUrl, {
      method: 'POST',
      body: { jsonrpc: '2.0', id: 1, method: 'platform.getBalance', params: { addresses: [`P-${address}`] } },
    })
  ).body.result;
  const unlocked = byState.unlockedUnstaked ?? [];
  expect(rpc.unlocked).toBe(tally(unlocked).amount);
  expect(rpc.balance).toBe(rpc.unlocked);
  expect(
    rpc.utxoIDs.map((id: { txID: string; outputIndex: number }) => `${id.txID}:${id.outputIndex}`).sort(),
  ).toEqual(unlocked.map((u) => `${u.txHash}:${u.outputIndex}`).sort());

  // The X-Chain has no stakes: its unlocked and atomic balances are its listed UTXOs.
  const xs = (await walk(`${base}/x-chain/utxos?addresses=${address}&pageSize=100`, 'utxos')).items;
  const xBalances = (await fetchJson(`${base}/x-chain/balances?addresses=${address}`)).body.balances;
  const local = (u: Listed) => u.createdOnChainId === u.consumedOnChainId;
  expect(category(xBalances.unlocked)).toEqual(tally(xs.filter(local)));
  expect(atomicOf(xBalances.atomicMemoryUnlocked)).toEqual(atomicListed(xs.filter((u) => !local(u))));
}

describe('UTXO states, §4.3 balances and platform.getBalance', () => {
  it('agree for every wallet before, during and after staking periods', async () => {
    // Times: now; the start of the next period to begin; the first end after that; a day later. The
    // two boundaries are where a stake changes state.
    const t0 = now();
    const stakes = emu.truth.primary('mainnet').stakes(t0);
    const next = stakes.filter((s) => t0 < s.start).sort((a, b) => a.start - b.start)[0] as StakeRec;
    const t1 = next.start;
    const t2 = Math.min(...stakes.filter((s) => s.start <= t1 && t1 < s.end).map((s) => s.end));
    const times = [t0, t1, t2, t2 + DAY];

    for (const t of times) {
      emu.advance(t - now());
      expect(now()).toBe(t);
      for (const network of NETWORKS) {
        const primary = emu.truth.primary(network);
        const wallets = primary.addresses();
        // Every holder of a UTXO is a wallet, so walking the wallets walks every UTXO.
        const holders = new Set(
          ['p', 'x'].flatMap((c) => primary.utxos(c as 'p', t).flatMap((u) => u.addresses)),
        );
        expect([...holders].filter((a) => !wallets.includes(a))).toEqual([]);
        for (const address of wallets) await checkWallet(network, address, t);
      }
    }
    for (const what of [
      'unlockedUnstaked',
      'unlockedStaked',
      'pendingStaked',
      'atomic',
      'stake returned, unspent',
    ])
      expect(seen.get(what), what).toBeGreaterThan(0);
  });
});
