import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { EvmChain } from '../../src/emulator/world/evm/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

let emu: Emulator;
let cchain: EvmChain;
let now: number;
let wallet: string;
let whale: string;

beforeAll(async () => {
  emu = await startEmulator();
  cchain = emu.truth.evm.chain('43114') as EvmChain;
  now = Math.floor(emu.clock.now());
  wallet = emu.truth.evm.wallets('mainnet')[5] as string;
  whale = emu.truth.evm.whale('mainnet');
});
afterAll(() => emu.close());

const base = () => `${emu.url}/v1/chains/43114`;
const key = (t: { blockNumber: string; blockIndex?: number; logIndex?: number }) =>
  [Number(t.blockNumber), t.blockIndex ?? t.logIndex ?? 0] as const;
const descending = (keys: (readonly [number, number])[]) =>
  keys.every(
    (k, i) =>
      i === 0 ||
      (keys[i - 1] as readonly [number, number])[0] > k[0] ||
      ((keys[i - 1] as readonly [number, number])[0] === k[0] &&
        (keys[i - 1] as readonly [number, number])[1] > k[1]),
  );

describe('/v1/chains', () => {
  it('lists the six EVM chains, filtered by network and feature', async () => {
    const all = await fetchJson(`${emu.url}/v1/chains`);
    expect(all.status).toBe(200);
    expect(all.body.chains.map((c: { chainId: string }) => c.chainId)).toEqual(
      emu.truth.evm.chains().map((c) => c.info.evmChainId),
    );
    expect(all.body.chains.every((c: { status: string }) => c.status === 'OK')).toBe(true);
    const fuji = await fetchJson(`${emu.url}/v1/chains?network=testnet`);
    expect(fuji.body.chains).toHaveLength(3);
    expect(fuji.body.chains.every((c: { isTestnet: boolean }) => c.isTestnet)).toBe(true);
    const nft = await fetchJson(`${emu.url}/v1/chains?feature=nftIndexing`);
    expect(nft.body.chains.map((c: { chainId: string }) => c.chainId)).toEqual(['43114', '43113']);
    expect((await fetchJson(`${emu.url}/v1/chains?feature=bridges`)).status).toBe(400);
  });
});

describe('listNative', () => {
  it('walks every transaction of a wallet exactly once, newest first, equal to the truth', async () => {
    const truth = cchain.listNative(wallet, {}, now, undefined, 1e9).items;
    expect(truth.length).toBeGreaterThan(100);
    expect(truth.length).toBeLessThan(5_000);
    const { items, pages } = await walk(
      `${base()}/addresses/${wallet}/transactions:listNative?pageSize=100`,
      'transactions',
    );
    expect(pages).toBe(Math.ceil(truth.length / 100));
    expect(items).toEqual(truth);
    expect(new Set(items.map((t) => t.txHash)).size).toBe(items.length);
    expect(descending(items.map(key))).toBe(true);
    expect(items.every((t) => t.from.address === wallet || t.to.address === wallet)).toBe(true);
  });

  it('honours startBlock (inclusive) and endBlock (exclusive)', async () => {
    const all = cchain.listNative(whale, {}, now, undefined, 1e9).items;
    const startBlock = Number((all[Math.floor(all.length * 0.7)] as { blockNumber: string }).blockNumber);
    const endBlock = Number((all[Math.floor(all.length * 0.3)] as { blockNumber: string }).blockNumber);
    const url = `${base()}/addresses/${whale}/transactions:listNative?pageSize=37&startBlock=${startBlock}&endBlock=${endBlock}`;
    const { items } = await walk(url, 'transactions');
    const expected = all.filter(
      (t) => Number(t.blockNumber) >= startBlock && Number(t.blockNumber) < endBlock,
    );
    expect(items).toEqual(expected);
    expect(items.some((t) => Number(t.blockNumber) === startBlock)).toBe(true);
    expect(items.some((t) => Number(t.blockNumber) === endBlock)).toBe(false);
  });

  it('is not disturbed by the clock advancing between pages', async () => {
    const truth = cchain.listNative(wallet, {}, now, undefined, 1e9).items;
    const first = await fetchJson(`${base()}/addresses/${wallet}/transactions:listNative?pageSize=50`);
    emu.advance(6 * 3600);
    const rest = await walk(
      `${base()}/addresses/${wallet}/transactions:listNative?pageSize=50&pageToken=${first.body.nextPageToken}`,
      'transactions',
    );
    expect([...first.body.transactions, ...rest.items]).toEqual(truth);
  });

  it('rejects bad parameters with 400s naming them, unknown chains with 404', async () => {
    const bad = await fetchJson(`${base()}/addresses/0x123/transactions:listNative`);
    expect(bad.status).toBe(400);
    expect(String(bad.body.message)).toContain('address');
    const size = await fetchJson(`${base()}/addresses/${wallet}/transactions:listNative?pageSize=101`);
    expect(size.status).toBe(400);
    expect(String(size.body.message)).toContain('pageSize');
    const range = await fetchJson(
      `${base()}/addresses/${wallet}/transactions:listNative?startBlock=10&endBlock=10`,
    );
    expect(range.status).toBe(400);
    const unknown = await fetchJson(
      `${emu.url}/v1/chains/999999/addresses/${wallet}/transactions:listNative`,
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Not Found');
  });

  it('accepts the blockchain id in place of the EVM chain id', async () => {
    const byId = await fetchJson(`${base()}/addresses/${wallet}/transactions:listNative?endBlock=1000000`);
    const byBlockchain = await fetchJson(
      `${emu.url}/v1/chains/${cchain.info.blockchainId}/addresses/${wallet}/transactions:listNative?endBlock=1000000`,
    );
    expect(byBlockchain.body.transactions).toEqual(byId.body.transactions);
  });
});

describe('listErc20', () => {
  it('walks every transfer once, newest first by (block, logIndex), equal to the truth', async () => {
    const truth = cchain.listErc20(wallet, {}, now, undefined, 1e9).items;
    expect(truth.length).toBeGreaterThan(20);
    const { items } = await walk(
      `${base()}/addresses/${wallet}/transactions:listErc20?pageSize=25`,
      'transactions',
    );
    expect(items).toEqual(truth);
    expect(descending(items.map(key))).toBe(true);
    expect(items.every((t) => t.from.address === wallet || t.to.address === wallet)).toBe(true);
    expect(items.every((t) => t.erc20Token.ercType === 'ERC-20')).toBe(true);
  });
});

describe('balances', () => {
  it('getNative is the balance as of blockNumber, consistent with the native transactions', async () => {
    const txs = cchain.listNative(wallet, {}, now, undefined, 1e9).items;
    const tx = txs.find(
      (t, i) =>
        i + 1 < txs.length &&
        (txs[i + 1] as { blockNumber: string }).blockNumber !== t.blockNumber &&
        (i === 0 || (txs[i - 1] as { blockNumber: string }).blockNumber !== t.blockNumber),
    ) as (typeof txs)[number];
    const block = Number(tx.blockNumber);
    const at = async (b: number) =>
      BigInt(
        (await fetchJson(`${base()}/addresses/${wallet}/balances:getNative?blockNumber=${b}`)).body
          .nativeTokenBalance.balance,
      );
    let delta = 0n;
    const ok = tx.txStatus === '1';
    if (tx.from.address === wallet)
      delta -= BigInt(tx.gasUsed) * BigInt(tx.gasPrice) + (ok ? BigInt(tx.value) : 0n);
    if (tx.to.address === wallet && ok) delta += BigInt(tx.value);
    expect((await at(block)) - (await at(block - 1))).toBe(delta);
    const latest = await fetchJson(`${base()}/addresses/${wallet}/balances:getNative?currency=eur`);
    expect(latest.body.nativeTokenBalance.symbol).toBe('AVAX');
    expect(latest.body.nativeTokenBalance.price.currencyCode).toBe('eur');
    expect(BigInt(latest.body.nativeTokenBalance.balance)).toBe(
      cchain.nativeBalance(wallet, cchain.head(emu.clock.now())),
    );
    const future = await fetchJson(`${base()}/addresses/${wallet}/balances:getNative?blockNumber=999999999`);
    expect(future.status).toBe(400);
  });

  it("the whale's closed-form balance equals its genesis allocation plus every listed transaction, on each chain", () => {
    for (const chain of emu.truth.evm.chains('mainnet')) {
      const txs = chain.listNative(whale, {}, now, undefined, 1e9).items.reverse();
      expect(txs.length).toBeGreaterThan(400);
      let balance = 10_000_000n * 10n ** 18n;
      let checked = 0;
      txs.forEach((tx, i) => {
        const ok = tx.txStatus === '1';
        if (tx.from.address === whale)
          balance -= BigInt(tx.gasUsed) * BigInt(tx.gasPrice) + (ok ? BigInt(tx.value) : 0n);
        if (tx.to.address === whale && ok) balance += BigInt(tx.value);
        if (txs[i + 1]?.blockNumber !== tx.blockNumber) {
          expect(chain.nativeBalance(whale, Number(tx.blockNumber))).toBe(balance);
          checked++;
        }
      });
      expect(checked).toBeGreaterThan(400);
      // Its sends are legacy transactions at a fixed price above any base fee.
      const sent = txs.filter((t) => t.from.address === whale);
      expect(sent.every((t) => t.txType === 0)).toBe(true);
      expect(sent.every((t) => BigInt(t.gasPrice) > BigInt(chain.block(Number(t.blockNumber)).baseFee))).toBe(
        true,
      );
    }
  });

  it('listErc721 lists the tokens an address owns, with the native balance', async () => {
    const { items } = await walk(
      `${base()}/addresses/${whale}/balances:listErc721?pageSize=7`,
      'erc721TokenBalances',
    );
    expect(items.length).toBeGreaterThan(5);
    expect(
      items.every((t) => t.ownerAddress === whale && t.chainId === '43114' && t.ercType === 'ERC-721'),
    ).toBe(true);
    expect(new Set(items.map((t) => `${t.address}:${t.tokenId}`)).size).toBe(items.length);
    const collection = items[0].address as string;
    const one = await walk(
      `${base()}/addresses/${whale}/balances:listErc721?pageSize=500&contractAddress=${collection}`,
      'erc721TokenBalances',
    );
    expect(one.items).toEqual(items.filter((t) => t.address === collection));
    const first = await fetchJson(`${base()}/addresses/${whale}/balances:listErc721`);
    expect(first.body.nativeTokenBalance.chainId).toBe('43114');
    expect((await fetchJson(`${base()}/addresses/${whale}/balances:listErc721?pageSize=501`)).status).toBe(
      400,
    );
  });
});

describe('chain creation', () => {
  it("an L1's block 0 is its creation, createdAfterGenesis after the world's genesis", async () => {
    for (const chain of emu.truth.evm.chains('mainnet')) {
      const { createdAfterGenesis, blockSeconds, evmChainId } = chain.info;
      const created = emu.truth.genesis + createdAfterGenesis;
      expect(chain.block(0).blockTimestamp).toBe(created);
      const t = Math.floor(emu.clock.now());
      expect(chain.head(t)).toBe(Math.floor((t - created) / blockSeconds));
      expect(chain.head(created - 1)).toBe(-1);
      const blocks = await walk(`${emu.url}/v1/chains/${evmChainId}/blocks?pageSize=100`, 'blocks', {
        maxPages: 1,
      });
      expect(Number(blocks.items[0].blockNumber)).toBe(chain.head(t));
    }
    const [c, l1, subnet] = emu.truth.evm.chains('mainnet').map((x) => x.info.createdAfterGenesis);
    expect([c, l1, subnet]).toEqual([0, 4 * 3600, 5 * 3600]);
  });
});

describe('blocks, latest transactions, NFT tokens', () => {
  it('lists blocks newest first from the head, each linked to its parent', async () => {
    const { items } = await walk(`${base()}/blocks?pageSize=100`, 'blocks', { maxPages: 3 });
    const head = cchain.head(emu.clock.now());
    expect(Number(items[0].blockNumber)).toBe(head);
    items.forEach((b, i) => {
      expect(Number(b.blockNumber)).toBe(head - i);
      if (i > 0) expect(items[i - 1].parentHash).toBe(b.blockHash);
      expect(Number(b.cumulativeTransactions)).toBe(cchain.txCountBetween(0, head - i + 1));
    });
  });

  it('filters the latest transactions by status', async () => {
    const failed = await walk(`${base()}/transactions?pageSize=100&status=failed`, 'transactions', {
      maxPages: 2,
    });
    expect(failed.items.length).toBe(200);
    expect(failed.items.every((t) => t.txStatus === '0')).toBe(true);
    expect(descending(failed.items.map(key))).toBe(true);
    expect((await fetchJson(`${base()}/transactions?status=pending`)).status).toBe(400);
  });

  it('walks a collection by token id with metadata statuses from the OpenAPI enum', async () => {
    const collection = cchain.core.contracts.find((c) => c.kind === 'erc721')?.address as string;
    const { items } = await walk(`${base()}/nfts/collections/${collection}/tokens?pageSize=50`, 'tokens');
    expect(items.map((t) => Number(t.tokenId))).toEqual(items.map((_, i) => i));
    expect(items.length).toBe(
      emu.truth.evm.profile.nftsPerCollection + 1 + Math.floor((6 * 3600) / ((30 * 86400) / 120)),
    );
    const statuses = new Set(items.map((t) => t.metadata.indexStatus));
    expect(statuses.has('INDEXED')).toBe(true);
    expect(
      [...statuses].every((s) =>
        [
          'INDEXED',
          'UNINDEXED',
          'UNREACHABLE_TOKEN_URI',
          'INVALID_METADATA',
          'THROTTLED_TOKEN_URI',
          'INVALID_TOKEN_URI',
          'MISSING_TOKEN',
        ].includes(s),
      ),
    ).toBe(true);
  });
});
