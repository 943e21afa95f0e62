import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { evmChainsOf } from '../../src/emulator/world/chains.ts';
import { fetchJson, startEmulator, walk } from '../helpers/emulator.ts';

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const now = () => Math.floor(emu.clock.now());
const truth = () => emu.truth.primary('mainnet');
const call = async (method: string, params: unknown = {}, path = '/ext/bc/P') =>
  (await fetchJson(`${emu.url}${path}`, { method: 'POST', body: { jsonrpc: '2.0', id: 1, method, params } }))
    .body;

describe('platform RPC', () => {
  it('answers envelopes and the codec errors', async () => {
    expect(await call('platform.getHeight')).toEqual({
      jsonrpc: '2.0',
      result: { height: String(truth().blocks(now()).length - 1) },
      id: 1,
    });
    const parse = await fetchJson(`${emu.url}/ext/bc/P`, { method: 'POST', body: '{"jsonrpc":' });
    expect(parse.status).toBe(200);
    expect(parse.body.error.code).toBe(-32700);
    const invalid = await fetchJson(`${emu.url}/ext/bc/P`, {
      method: 'POST',
      body: { jsonrpc: '1.0', id: 2, method: 'platform.getHeight' },
    });
    expect(invalid.body.error.code).toBe(-32600);
    expect((await call('platform.nope')).error).toEqual({
      code: -32000,
      message: 'rpc: can\'t find method "platform.nope"',
      data: null,
    });
    expect((await call('platform.getBlockchainStatus', {})).error.message).toBe(
      "argument 'blockchainID' not given",
    );
    expect((await call('platform.getBalance', { addresses: [] })).error.message).toBe(
      'no addresses provided',
    );
    expect((await call('platform.getBlockByHeight', { height: 99_999_999 })).error.message).toBe(
      "couldn't get block at height 99999999: not found",
    );
    expect((await call('platform.getBlock', { blockID: 'xyz' })).error.message).toContain(
      "couldn't unmarshal an argument",
    );
  });

  it('serves blocks by height in hex (with checksum) and json, matching the Data API', async () => {
    const block = truth()
      .blocks(now())
      .find((b) => b.txs.length > 0 && b.height > 10);
    if (!block) throw new Error('no block');
    const hex = (await call('platform.getBlockByHeight', { height: String(block.height) })).result;
    expect(hex.encoding).toBe('hex');
    const bytes = Buffer.from(hex.block.slice(2, -8), 'hex');
    const sha = createHash('sha256').update(bytes).digest();
    expect(hex.block.slice(-8)).toBe(sha.subarray(-4).toString('hex'));
    const json = (await call('platform.getBlockByHeight', { height: block.height, encoding: 'json' })).result;
    expect(json.block).toMatchObject({ parentID: block.parent, height: block.height, time: block.time });
    expect(json.block.txs.map((t: any) => t.id)).toEqual(block.txs.map((t) => t.hash));
    const byId = (await call('platform.getBlock', { blockID: block.hash, encoding: 'json' })).result;
    expect(byId).toEqual(json);
    const tx = block.txs[0];
    const listed = await walk(
      `${emu.url}/v1/networks/mainnet/blockchains/p-chain/transactions?pageSize=100`,
      'transactions',
    );
    expect(listed.items.find((t) => t.txHash === tx?.hash)).toMatchObject({
      blockNumber: String(block.height),
      blockHash: block.hash,
    });
  });

  it('getBalance agrees with the Data API balances', async () => {
    const wallet = truth().wallets()[4]?.address as string;
    const rpc = (await call('platform.getBalance', { addresses: [`P-${wallet}`] })).result;
    const data = await fetchJson(
      `${emu.url}/v1/networks/mainnet/blockchains/p-chain/balances?addresses=${wallet}`,
    );
    const unlocked = data.body.balances.unlockedUnstaked[0];
    expect(rpc.unlocked).toBe(unlocked?.amount ?? '0');
    expect(rpc.balance).toBe(rpc.unlocked);
    expect(rpc.utxoIDs.length).toBe(unlocked?.utxoCount ?? 0);
  });

  it('getCurrentValidators agrees with the world and the Data API delegators', async () => {
    const { validators } = (await call('platform.getCurrentValidators')).result;
    expect(validators.map((v: any) => v.nodeID)).toEqual(
      truth()
        .validators(now())
        .map((s) => s.nodeId),
    );
    expect(validators[0].delegators).toBeUndefined();
    const node = validators.find((v: any) => Number(v.delegatorCount) > 0) ?? validators[0];
    const one = (await call('platform.getCurrentValidators', { nodeIDs: [node.nodeID] })).result.validators;
    expect(one).toHaveLength(1);
    const active = await walk(
      `${emu.url}/v1/networks/mainnet/delegators?nodeIds=${node.nodeID}&delegationStatus=active&pageSize=100`,
      'delegators',
    );
    expect(one[0].delegators.map((d: any) => d.txID).sort()).toEqual(
      active.items.map((d) => d.txHash).sort(),
    );
    expect(one[0].delegatorCount).toBe(String(active.items.length));
    const chains = evmChainsOf(emu.truth.seed, 'mainnet');
    const l1 = chains.find((c) => c.validatorSet === 'l1');
    const l1Vals = (await call('platform.getCurrentValidators', { subnetID: l1?.subnetId })).result
      .validators;
    expect(l1Vals.length).toBeGreaterThan(0);
    expect(l1Vals[0]).toHaveProperty('validationID');
    expect(l1Vals[0]).not.toHaveProperty('endTime');
    const harbor = chains.find((c) => c.validatorSet === 'permissioned');
    const poa = (await call('platform.getCurrentValidators', { subnetID: harbor?.subnetId })).result
      .validators;
    expect(poa.length).toBeGreaterThan(0);
    expect(Object.keys(poa[0]).sort()).toEqual(['endTime', 'nodeID', 'startTime', 'txID', 'weight']);
  });

  it('lists blockchains, their status and the supply', async () => {
    const { blockchains } = (await call('platform.getBlockchains')).result;
    expect(blockchains).toHaveLength(4);
    for (const c of blockchains)
      expect(typeof (await call('platform.getBlockchainStatus', { blockchainID: c.id })).result.status).toBe(
        'string',
      );
    const supply = (await call('platform.getCurrentSupply')).result;
    const last = truth().blocks(now()).at(-1);
    expect(supply).toEqual({ supply: String(last?.supply), height: String(last?.height) });
    const fuji = await call('platform.getHeight', {}, '/fuji/ext/bc/P');
    expect(fuji.result.height).toBe(String(emu.truth.primary('fuji').blocks(now()).length - 1));
  });
});
