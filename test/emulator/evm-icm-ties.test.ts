import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { EvmTransactionRecord } from '../../src/emulator/world/evm/chain.ts';
import { ICM_CONTRACT_ADDRESS } from '../../src/emulator/world/evm/icm.ts';
import type { EvmChain } from '../../src/emulator/world/evm/index.ts';
import type { Network } from '../../src/emulator/world/networks.ts';
import { fetchJson, startEmulator, TEST_EPOCH } from '../helpers/emulator.ts';

const DAY = 86_400;
const NETWORKS: Network[] = ['mainnet', 'fuji'];
let emu: Emulator;
let now: number;
beforeAll(async () => {
  emu = await startEmulator();
  now = Math.floor(emu.clock.now());
});
afterAll(() => emu.close());

/** /v1/chains/{id}/transactions, newest first, until the page ends before `since`. */
async function latestSince(chainId: string, since: number): Promise<EvmTransactionRecord[]> {
  const txs: EvmTransactionRecord[] = [];
  let token: string | undefined;
  do {
    const res = await fetchJson(
      `${emu.url}/v1/chains/${chainId}/transactions?pageSize=100${token ? `&pageToken=${token}` : ''}`,
    );
    expect(res.status).toBe(200);
    txs.push(...res.body.transactions);
    token = res.body.nextPageToken;
  } while (token && (txs.at(-1) as EvmTransactionRecord).blockTimestamp >= since);
  return txs.filter((t) => t.blockTimestamp >= since);
}

/** Messages delivered in [since, now), of a network, with their ties. */
function deliveredSince(network: Network, since: number) {
  const ledger = emu.truth.evm.icm(network);
  const out: number[] = [];
  for (let k = ledger.count(now) - 1; k >= 0 && ledger.sentAt(k) >= since - DAY; k--)
    if (ledger.exists(k) && ledger.deliveredAt(k) >= since && ledger.deliveredAt(k) <= now) out.push(k);
  return out;
}

describe('ICM messages are transactions of their chains', () => {
  it('has the ICM contract among every chain’s contracts', () => {
    for (const chain of emu.truth.evm.chains()) {
      expect(chain.core.contracts.map((c) => c.address)).toContain(ICM_CONTRACT_ADDRESS);
      expect(chain.core.partyOf(ICM_CONTRACT_ADDRESS)?.type).toBe('contract');
    }
  });

  for (const network of NETWORKS) {
    it(`${network}: each message's source and delivery are in their blocks and listings, with the same facts`, async () => {
      const since = now - DAY / 2;
      const ledger = emu.truth.evm.icm(network);
      const chains = emu.truth.evm.chains(network);
      const ks = deliveredSince(network, since);
      expect(ks.length).toBeGreaterThan(20);
      const listed = new Map<string, Map<string, EvmTransactionRecord>>();
      for (const chain of chains) {
        const txs = await latestSince(chain.info.evmChainId, since - DAY);
        listed.set(chain.info.evmChainId, new Map(txs.map((t) => [t.txHash, t])));
      }
      const seen = { source: new Set<string>(), delivery: new Set<string>() };
      for (const k of ks) {
        const msg = ledger.message(k, now);
        const src = chains.find((c) => c.info.evmChainId === msg.sourceEvmChainId) as EvmChain;
        const dst = chains.find((c) => c.info.evmChainId === msg.destinationEvmChainId) as EvmChain;
        const tie = ledger.ties(k);
        if (!tie) throw new Error(`message ${k} has no ties`);

        // The source: a call of sendCrossChainMessage on the ICM contract by the message's sender.
        const sent = src.core.transaction(tie.source[1]);
        const block = src.transactions(Number(sent.blockNumber));
        expect(block.find((t) => t.txHash === sent.txHash)).toEqual(sent);
        expect(sent.from.address).toBe(msg.from);
        expect(sent.to.address).toBe(ICM_CONTRACT_ADDRESS);
        expect(sent.method.callType).toBe('CONTRACT_CALL');
        expect(sent.method.methodName).toMatch(/^sendCrossChainMessage\(/);
        expect(sent.txStatus).toBe('1');
        expect(sent.blockTimestamp).toBe(ledger.sentAt(k));
        if (msg.sourceTransaction) {
          expect(msg.sourceTransaction.txHash).toBe(sent.txHash);
          expect(msg.sourceTransaction.timestamp).toBe(sent.blockTimestamp);
          expect(msg.sourceTransaction.gasSpent).toBe(sent.gasUsed);
        } else expect(msg.status).toBe('delivered_source_not_indexed');
        if (sent.blockTimestamp >= since - DAY)
          expect(listed.get(src.info.evmChainId)?.get(sent.txHash)).toEqual(sent);

        // The delivery: receiveCrossChainMessage on the destination chain, by the relaying wallet.
        const got = dst.core.transaction(tie.delivery[1]);
        expect(dst.transactions(Number(got.blockNumber)).find((t) => t.txHash === got.txHash)).toEqual(got);
        expect(got.to.address).toBe(ICM_CONTRACT_ADDRESS);
        expect(got.method.methodName).toMatch(/^receiveCrossChainMessage\(/);
        expect(got.txStatus).toBe('1');
        expect(got.blockTimestamp).toBeGreaterThan(sent.blockTimestamp);
        expect(msg.destinationTransaction).toEqual({
          txHash: got.txHash,
          timestamp: got.blockTimestamp,
          gasSpent: got.gasUsed,
          rewardRedeemer: got.from.address,
          delivererAddress: got.from.address,
        });
        expect(listed.get(dst.info.evmChainId)?.get(got.txHash)).toEqual(got);
        seen.source.add(sent.txHash);
        seen.delivery.add(got.txHash);
      }
      expect(seen.source.size).toBe(ks.length);
      expect(seen.delivery.size).toBe(ks.length);

      // The other way round: every listed call of the ICM contract sends or delivers one message.
      for (const chain of chains) {
        for (const tx of listed.get(chain.info.evmChainId)?.values() ?? []) {
          if (tx.to.address !== ICM_CONTRACT_ADDRESS) continue;
          const seq = chain.txCountBetween(0, Number(tx.blockNumber)) + tx.blockIndex;
          const role = chain.core.model.icmRole(seq);
          if (!role) throw new Error(`${tx.txHash} calls the ICM contract but sends or delivers nothing`);
          const tie = ledger.ties(role.k);
          expect(tie?.[role.side === 'send' ? 'source' : 'delivery']).toEqual([chains.indexOf(chain), seq]);
        }
      }
    });
  }

  it("the ICM contract's listNative is exactly its sends and deliveries", async () => {
    const chain = emu.truth.evm.chain('770001') as EvmChain;
    const since = now - DAY / 4;
    const res = await fetchJson(
      `${emu.url}/v1/chains/770001/addresses/${ICM_CONTRACT_ADDRESS}/transactions:listNative?pageSize=100`,
    );
    expect(res.status).toBe(200);
    const mine = (res.body.transactions as EvmTransactionRecord[]).filter((t) => t.blockTimestamp >= since);
    const all = (await latestSince('770001', since)).filter((t) => t.to.address === ICM_CONTRACT_ADDRESS);
    expect(all.length).toBeGreaterThan(5);
    expect(mine).toEqual(all.slice(0, mine.length));
    expect(mine.length).toBe(Math.min(all.length, res.body.transactions.length));
    expect(chain.core.partyOf(ICM_CONTRACT_ADDRESS)).toBeDefined();
  });
});

describe('what ICM changes stays consistent', () => {
  it("yesterday's txCount and gasUsed count the ICM transactions too, on each mainnet chain", async () => {
    const day = TEST_EPOCH - DAY;
    for (const chain of emu.truth.evm.chains('mainnet')) {
      const id = chain.info.evmChainId;
      const ofDay = (await latestSince(id, day)).filter((t) => t.blockTimestamp < day + DAY);
      expect(ofDay.some((t) => t.to.address === ICM_CONTRACT_ADDRESS)).toBe(true);
      const res = await fetchJson(`${emu.url}/v2/chains/${id}/metrics/txCount?pageSize=10`);
      const gas = await fetchJson(`${emu.url}/v2/chains/${id}/metrics/gasUsed?pageSize=10`);
      const at = (r: { results: { timestamp: number; value: number }[] }) =>
        r.results.find((p) => p.timestamp === day)?.value;
      expect(at(res.body)).toBe(ofDay.length);
      expect(at(gas.body)).toBe(ofDay.reduce((a, t) => a + Number(t.gasUsed), 0));
    }
  });

  it("a message sender's balance moves by exactly its listed transactions", () => {
    const ledger = emu.truth.evm.icm('mainnet');
    const chain = emu.truth.evm.chain('43114') as EvmChain;
    let k = ledger.count(now) - 1;
    while (ledger.ties(k)?.source[0] !== 0) k--;
    const sender = ledger.message(k, now).from;
    const txs = chain.listNative(sender, {}, now, undefined, 1e9).items.slice().reverse();
    expect(txs.some((t) => t.to.address === ICM_CONTRACT_ADDRESS)).toBe(true);
    let balance: bigint | undefined;
    for (const tx of txs) {
      const b = Number(tx.blockNumber);
      balance ??= chain.nativeBalance(sender, b - 1);
      const ok = tx.txStatus === '1';
      if (tx.from.address === sender)
        balance -= BigInt(tx.gasUsed) * BigInt(tx.gasPrice) + (ok ? BigInt(tx.value) : 0n);
      if (tx.to.address === sender && ok) balance += BigInt(tx.value);
      const next = txs[txs.indexOf(tx) + 1];
      if (next === undefined || Number(next.blockNumber) !== b)
        expect(chain.nativeBalance(sender, b)).toBe(balance);
    }
  });
});
