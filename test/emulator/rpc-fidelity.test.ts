import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bech32Decode, cb58Decode, cb58Encode } from '../../src/emulator/encoding.ts';
import type { Emulator } from '../../src/emulator/index.ts';
import { evmChainsOf } from '../../src/emulator/world/chains.ts';
import { PRIMARY_CHAINS, PRIMARY_SUBNET_ID } from '../../src/emulator/world/networks.ts';
import { fetchJson, startEmulator } from '../helpers/emulator.ts';

// Issue 15: the node RPC answers as avalanchego and gorilla/rpc (v1.2.0) do. Each expectation cites
// where that behaviour lives: pchain-rpc-and-warp.md, or avalanchego / gorilla source.

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(() => emu.close());

const MAINNET = PRIMARY_CHAINS.mainnet;
const now = () => Math.floor(emu.clock.now());
const truth = () => emu.truth.primary('mainnet');
const chains = () => evmChainsOf(emu.truth.seed, 'mainnet');

/** POSTs a body as sent (a string is sent verbatim) and returns status and parsed body (undefined if empty). */
const post = (body: unknown) => fetchJson(`${emu.url}/ext/bc/P`, { method: 'POST', body });
const call = async (method: string, params: unknown = {}, id: unknown = 1) =>
  (await post({ jsonrpc: '2.0', id, method, params })).body;
const serverError = (message: string, id: unknown = 1) => ({
  jsonrpc: '2.0',
  error: { code: -32000, message, data: null },
  id,
});

describe('node RPC as avalanchego answers it', () => {
  it('getCurrentSupply answers per subnet: the primary network has a supply, a subnet that is not permissionless has none', async () => {
    const last = truth().blocks(now()).at(-1);
    const primary = { supply: String(last?.supply), height: String(last?.height) };
    for (const params of [{}, { subnetID: PRIMARY_SUBNET_ID }, { subnetID: null }])
      expect(await call('platform.getCurrentSupply', params)).toEqual({
        jsonrpc: '2.0',
        result: primary,
        id: 1,
      });
    // service.go wraps state.GetCurrentSupply's database.ErrNotFound: only TransformSubnetTx gives a subnet
    // a supply, and none of this world's subnets (a converted L1, a permissioned subnet) has one.
    const subnets = chains().filter((c) => c.validatorSet !== 'primary');
    expect(subnets.map((c) => c.validatorSet).sort()).toEqual(['l1', 'permissioned']);
    for (const { subnetId } of subnets)
      expect(await call('platform.getCurrentSupply', { subnetID: subnetId })).toEqual(
        serverError('fetching current supply failed: not found'),
      );
    // An id that does not unmarshal into ids.ID is an argument error, not a lookup.
    expect((await call('platform.getCurrentSupply', { subnetID: 'nope' })).error.message).toMatch(
      /^couldn't unmarshal an argument/,
    );
  });

  it("getBlockchainStatus resolves the chain manager's aliases and words ids.FromString's errors; getBalance wants the chain prefix", async () => {
    const status = async (blockchainID: string) => call('platform.getBlockchainStatus', { blockchainID });
    // genesis/aliases.go: P/platform, X/avm, C/evm name the chains this node runs and validates.
    for (const [alias, id] of [
      ['P', MAINNET.p],
      ['platform', MAINNET.p],
      ['X', MAINNET.x],
      ['avm', MAINNET.x],
      ['C', MAINNET.c],
      ['evm', MAINNET.c],
    ] as const) {
      expect(await status(alias), alias).toEqual({ jsonrpc: '2.0', result: { status: 'Validating' }, id: 1 });
      expect(await status(id), id).toEqual(await status(alias));
    }
    const l1 = chains().find((c) => c.validatorSet === 'l1')?.blockchainId as string;
    expect((await status(l1)).result).toEqual({ status: 'Created' });
    // Not an alias, so parsed as an id: service.go "problem parsing blockchainID %q: %w" over cb58.Decode
    // (mr-tron/base58 beneath it) and hashing.ToHash256.
    const notChecksummed = `${MAINNET.x.slice(0, -1)}${MAINNET.x.endsWith('a') ? 'b' : 'a'}`;
    const shortId = cb58Encode(Buffer.alloc(20, 7));
    for (const [id, why] of [
      ['x', 'input string is smaller than the checksum size'],
      ['not-an-id', "base58 decoding error: Invalid base58 digit ('-')"],
      ['0abc', "base58 decoding error: Invalid base58 digit ('0')"],
      [notChecksummed, 'invalid input checksum'],
      [shortId, 'invalid hash length: expected 32 bytes but got 20'],
    ] as const)
      expect(await status(id), id).toEqual(serverError(`problem parsing blockchainID "${id}": ${why}`));

    // vms/components/avax/addresses.go: a cb58 short id, or <chain alias>-<bech32> naming this chain.
    const wallet = truth().wallets()[4]?.address as string;
    const bytes = bech32Decode(wallet)?.bytes as Buffer;
    const expected = (await call('platform.getBalance', { addresses: [`P-${wallet}`] })).result;
    expect(expected.utxoIDs.length).toBeGreaterThan(0);
    for (const address of [`platform-${wallet}`, `${MAINNET.p}-${wallet}`, cb58Encode(bytes)])
      expect((await call('platform.getBalance', { addresses: [address] })).result, address).toEqual(expected);
    const fujiWallet = 'fuji10savf428nlg3ueuqelwajlduywj6l4amucezfc';
    for (const [address, why] of [
      [wallet, 'no separator found in address'],
      [`Q-${wallet}`, 'there is no ID with alias Q'],
      [`p-${wallet}`, 'there is no ID with alias p'],
      [`P-${fujiWallet}`, 'expected hrp "avax" but got "fuji"'],
      [`X-${wallet}`, `mismatched chainIDs: expected "${MAINNET.p}" but got "${MAINNET.x}"`],
      [`C-${wallet}`, `mismatched chainIDs: expected "${MAINNET.p}" but got "${MAINNET.c}"`],
    ] as const)
      expect(await call('platform.getBalance', { addresses: [`P-${wallet}`, address] }), address).toEqual(
        serverError(`couldn't parse address "${address}": ${why}`),
      );
  });

  it("answers JSON-RPC edge cases as gorilla/rpc's json2 codec does", async () => {
    // serverRequest.Id is a *json.RawMessage: null leaves it nil, and a nil id is a notification — no
    // body, whether the call succeeds or fails (json2/server.go writeServerResponse).
    for (const body of [
      { jsonrpc: '2.0', id: null, method: 'platform.getHeight' },
      { jsonrpc: '2.0', id: null, method: 'platform.nope' },
      { jsonrpc: '2.0', id: null, method: 'platform.GetHeight' },
      { jsonrpc: '1.0', method: 'platform.getHeight' },
      { jsonrpc: '2.0', method: 'avm.getHeight' },
    ])
      expect(await post(body), JSON.stringify(body)).toMatchObject({ status: 200, body: undefined });

    // The id is copied back as sent, whatever JSON it is.
    const height = (await call('platform.getHeight')).result;
    for (const id of [{ a: [1, { b: null }] }, [1, 'two', null], 'x', 0, true])
      expect(await call('platform.getHeight', {}, id)).toEqual({ jsonrpc: '2.0', result: height, id });
    expect(await call('platform.nope', {}, { n: 1 })).toEqual(
      serverError('rpc: can\'t find method "platform.nope"', { n: 1 }),
    );

    // A member of the wrong type fails Go's json.Decoder: -32700 with the decoder's message and the partly
    // decoded request as data, answered even without an id (a parse error hides whether one was meant).
    expect(await post({ jsonrpc: '2.0', id: 7, method: 1, params: { a: 1 } })).toEqual({
      status: 200,
      headers: expect.any(Object),
      body: {
        jsonrpc: '2.0',
        error: {
          code: -32700,
          message: 'json: cannot unmarshal number into Go struct field serverRequest.method of type string',
          data: { jsonrpc: '2.0', method: '', params: { a: 1 }, id: 7 },
        },
        id: 7,
      },
    });
    expect((await post({ jsonrpc: '2.0', method: ['platform.getHeight'] })).body).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32700,
        message: 'json: cannot unmarshal array into Go struct field serverRequest.method of type string',
        data: { jsonrpc: '2.0', method: '', params: null, id: null },
      },
      id: null,
    });
    expect((await post('[{"jsonrpc":"2.0","id":1,"method":"platform.getHeight"}]')).body).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32700,
        message: 'json: cannot unmarshal array into Go value of type json2.serverRequest',
        data: { jsonrpc: '', method: '', params: null, id: null },
      },
      id: null,
    });
    // json.Decoder's words for an empty body and one cut short.
    expect((await post('')).body.error).toMatchObject({ code: -32700, message: 'EOF' });
    expect((await post('{"jsonrpc":"2.0","id":')).body.error).toMatchObject({
      code: -32700,
      message: 'unexpected EOF',
    });

    // avalanchego's utils/json codec refuses an upper-case first letter after the dot, before any lookup.
    for (const method of ['platform.GetHeight', 'avm.GetHeight'])
      expect(await call(method)).toEqual(serverError('method must start with a non-uppercase letter'));
    // gorilla's serviceMap.get: exactly service.method.
    expect(await call('platform.')).toEqual(serverError('rpc: can\'t find method "platform."'));
    expect(await call('platform.get.height')).toEqual(
      serverError('rpc: service/method request ill-formed: "platform.get.height"'),
    );
    // ReadRequest reads params by name, or by position: the first element fills the args, the rest drop.
    expect(
      await call('platform.getBlockByHeight', [{ height: 0, encoding: 'json' }, 'ignored']),
    ).toMatchObject({
      result: { encoding: 'json', block: { height: 0 } },
    });
    expect(await call('platform.getHeight', 'x')).toEqual(
      serverError(
        "couldn't unmarshal an argument. Ensure arguments are valid and properly formatted. See documentation for example calls",
      ),
    );
  });

  it('hex blocks carry the block header and id avalanchego computes, with transaction ids in place of transactions (docs R1)', async () => {
    // Not avalanchego's codec: a real standard block serializes each signed transaction after the count.
    const block = truth()
      .blocks(now())
      .find((b) => b.type === 'BanffStandardBlock' && b.txs.length > 0 && b.height > 0);
    if (!block) throw new Error('no standard block with transactions');
    const { result } = await call('platform.getBlockByHeight', { height: block.height, encoding: 'hexnc' });
    const bytes = Buffer.from(result.block.slice(2), 'hex');
    expect(bytes.readUInt16BE(0)).toBe(0);
    expect(bytes.readUInt32BE(2)).toBe(32);
    expect(Number(bytes.readBigUInt64BE(6))).toBe(block.time);
    expect(cb58Encode(bytes.subarray(14, 46))).toBe(block.parent);
    expect(Number(bytes.readBigUInt64BE(46))).toBe(block.height);
    expect(bytes.readUInt32BE(54)).toBe(block.txs.length);
    expect(bytes.subarray(58)).toEqual(Buffer.concat(block.txs.map((tx) => cb58Decode(tx.hash) as Buffer)));
    // avalanchego's block id is the SHA-256 of the block's bytes.
    expect(cb58Encode(createHash('sha256').update(bytes).digest())).toBe(block.hash);
  });
});
