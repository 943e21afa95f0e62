import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

describe('/v1/icm/addresses/{address}/messages', () => {
  it('walks the whale messages newest first, once each, between the C-Chain and the L1s', async () => {
    const whale = emu.truth.evm.whale('mainnet');
    const now = Math.floor(emu.clock.now());
    const ledger = emu.truth.evm.icm('mainnet');
    const expected = [...ledger.indexesDesc(whale, now)].map((k) => ledger.message(k, now));
    expect(expected.length).toBeGreaterThan(100);
    const { items } = await walk(`${emu.url}/v1/icm/addresses/${whale}/messages?pageSize=100`, 'messages');
    expect(items).toEqual(expected);
    expect(new Set(items.map((m) => m.messageId)).size).toBe(items.length);
    const times = items.map((m) => ledger.sentAt(Number(m.messageNonce)));
    expect(times.every((t, i) => i === 0 || (times[i - 1] as number) > t)).toBe(true);
    expect(items.every((m) => m.from === whale || m.to === whale)).toBe(true);
    const chains = new Set(emu.truth.evm.chains('mainnet').map((c) => c.info.evmChainId));
    expect(items.every((m) => chains.has(m.sourceEvmChainId) && chains.has(m.destinationEvmChainId))).toBe(
      true,
    );
    expect(items.every((m) => m.sourceEvmChainId === '43114' || m.destinationEvmChainId === '43114')).toBe(
      true,
    );
    const statuses = new Set(items.map((m) => m.status));
    expect(statuses.has('delivered')).toBe(true);
  });

  it('moves a pending message to delivered as the clock advances', async () => {
    const ledger = emu.truth.evm.icm('fuji');
    // The next message to leave, taken the moment it is sent (one whose source is indexed, so listed).
    let k = ledger.count(Math.floor(emu.clock.now()));
    while (!ledger.visible(k, ledger.sentAt(k))) k++;
    emu.advance(ledger.sentAt(k) - Math.floor(emu.clock.now()));
    const now = Math.floor(emu.clock.now());
    expect(ledger.deliveredAt(k)).toBeGreaterThan(now);
    const msg = ledger.message(k, now);
    const url = `${emu.url}/v1/icm/addresses/${msg.from}/messages?network=fuji&pageSize=100`;
    const find = async () =>
      (await walk(url, 'messages')).items.find((m) => m.messageId === msg.messageId) as {
        status: string;
        receipts: unknown[];
      };
    expect((await find()).status).toBe('pending');
    emu.advance(ledger.deliveredAt(k) - now + 5_000);
    const later = await find();
    expect(later.status).toBe('delivered');
    expect(later.receipts.length).toBe(1);
  });

  it('validates the address and network', async () => {
    expect((await fetchJson(`${emu.url}/v1/icm/addresses/nope/messages`)).status).toBe(400);
    const net = await fetchJson(
      `${emu.url}/v1/icm/addresses/${emu.truth.evm.whale('fuji')}/messages?network=devnet`,
    );
    expect(net.status).toBe(400);
    expect(String(net.body.message)).toContain('network');
    const stranger = await fetchJson(`${emu.url}/v1/icm/addresses/0x${'ab'.repeat(20)}/messages`);
    expect(stranger.body).toEqual({ messages: [] });
  });
});

describe('determinism', () => {
  it('gives the same bytes for the same seed and clock, other bytes for another seed', async () => {
    const a = await startEmulator();
    const b = await startEmulator();
    const c = await startEmulator({ seed: 8 });
    try {
      const whale = a.truth.evm.whale('mainnet');
      const paths = [
        '/v1/chains',
        '/v1/chains/43114/blocks?pageSize=20',
        '/v1/chains/770001/transactions?pageSize=50',
        `/v1/chains/43114/addresses/${whale}/transactions:listNative?pageSize=100`,
        `/v1/chains/43114/addresses/${whale}/transactions:listErc20?pageSize=100`,
        `/v1/icm/addresses/${whale}/messages`,
        '/v2/chains/43114/metrics/activeAddresses?pageSize=40',
      ];
      for (const path of paths) {
        const [x, y] = await Promise.all([fetchJson(a.url + path), fetchJson(b.url + path)]);
        expect(JSON.stringify(y.body)).toBe(JSON.stringify(x.body));
      }
      const other = await fetchJson(`${c.url}/v1/chains/43114/blocks?pageSize=5`);
      const mine = await fetchJson(`${a.url}/v1/chains/43114/blocks?pageSize=5`);
      expect(other.body.blocks[0].blockHash).not.toBe(mine.body.blocks[0].blockHash);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});
