import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { TxRec } from '../../src/emulator/world/primary/types.ts';
import { resolveExtractConfig } from '../../src/extract/config.ts';
import { type Pipeline, PipelineSchema, PRIMARY_NETWORK_TX_TYPES } from '../../src/extract/pipeline.ts';
import { buildWarehouse } from '../../src/warehouse/build.ts';
import { fetchJson, useEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';
import { queryLake, streamTable } from '../helpers/lake.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

/**
 * Issue 15, points 6 and 8: the §4.1 filters. The emulator takes an L1 validation id with `txTypes` and
 * timestamps but without addresses, as the providers' document allows; a pipeline restricts the P-Chain
 * transactions to `primary.txTypes`, reads each of `primary.l1ValidationIds` as a partition of its own,
 * and snapshots the status of every blockchain it names in `primary.blockchains` besides P, X and C.
 */

const SHARED = process.env.AVALAKE_SHARED_DIR ?? fileURLToPath(new URL('../../../shared/', import.meta.url));
const readJson = (path: string) => JSON.parse(readFileSync(join(SHARED, 'reference', path), 'utf8'));
const TX_PATH = '/v1/networks/{network}/blockchains/{blockchainId}/transactions';

const emulator = useEmulator();

const now = () => Math.floor(emulator.clock.now());
const pTransactions = () => emulator.truth.primary('fuji').transactions('p', now());
const ofValidation = (id: string) => (tx: TxRec) => tx.l1?.validators.some((v) => v.validationId === id);
/** The L1 validations with the most transactions, most first (each has a ConvertSubnetToL1Tx or Register…). */
const busiestValidations = () =>
  emulator.truth
    .primary('fuji')
    .l1Validators(now())
    .map(({ validator }) => validator.validationId)
    .map((id) => ({ id, count: pTransactions().filter(ofValidation(id)).length }))
    .sort((a, b) => b.count - a.count)
    .map((v) => v.id);

/** A workspace reading only `streams`, with the pipeline's `primary` edited. */
function workspace(streams: string[], primary: (p: Record<string, unknown>) => void) {
  const w = demoWorkspace(emulator, (p) => {
    p.streams = streams;
    primary(p.primary as Record<string, unknown>);
  });
  const pipeline = PipelineSchema.parse(JSON.parse(readFileSync(w.pipelinePath, 'utf8')));
  return { ...w, pipeline };
}

/** The lake's transactions by partition label: a sorted list of tx hashes. */
async function lakeHashes(dataDir: string, label: string): Promise<Record<string, string[]>> {
  const rows = await queryLake(
    `select ${label} as p, list(distinct txHash order by txHash) as hashes, count(*)::int as n from ${streamTable(dataDir, 'p_chain_transactions')} group by all`,
  );
  for (const r of rows) expect(r.n, `no duplicates in ${r.p}`).toBe((r.hashes as string[]).length);
  return Object.fromEntries(rows.map((r) => [r.p as string, r.hashes as string[]]));
}

const hashesOf = (txs: TxRec[]) => txs.map((t) => t.hash).sort();

describe('point 6: the emulator takes l1ValidationId with txTypes and timestamps, without addresses', () => {
  const url = (query: Record<string, string | number>) =>
    `${emulator.url}/v1/networks/fuji/blockchains/p-chain/transactions?${new URLSearchParams(
      Object.entries({ ...query, pageSize: 100 }).map(([k, v]): [string, string] => [k, String(v)]),
    )}`;

  it('as the OpenAPI document lists them for the endpoint', () => {
    const op = readJson('openapi/data-api.glacier.openapi.json').paths[TX_PATH].get;
    const names = (op.parameters as { name: string; in: string }[]).filter((p) => p.in === 'query');
    expect(names.map((p) => p.name)).toEqual(
      expect.arrayContaining(['addresses', 'l1ValidationId', 'txTypes', 'startTimestamp', 'endTimestamp']),
    );
    expect(op.description).toContain('These transactions are further filterable by txTypes and timestamps');
  });

  it('answers exactly the validation’s transactions of those types, in that time window', async () => {
    const [id] = busiestValidations();
    const all = pTransactions().filter(ofValidation(id as string));
    expect(all.length).toBeGreaterThanOrEqual(3);
    const increases = all.filter((t) => t.type === 'IncreaseL1ValidatorBalanceTx');
    expect(increases.length).toBeGreaterThan(0);
    expect(increases.length).toBeLessThan(all.length);
    const typed = await fetchJson(
      url({ l1ValidationId: id as string, txTypes: 'IncreaseL1ValidatorBalanceTx' }),
    );
    expect(typed.status).toBe(200);
    expect(typed.body.transactions.map((t: { txHash: string }) => t.txHash).sort()).toEqual(
      hashesOf(increases),
    );

    // The window holds the second transaction on: both bounds cut, asc and desc alike.
    const times = all.map((t) => t.time).sort((a, b) => a - b);
    const [from, to] = [times[1] as number, times.at(-1) as number];
    for (const sortOrder of ['asc', 'desc']) {
      const windowed = await fetchJson(
        url({ l1ValidationId: id as string, startTimestamp: from, endTimestamp: to, sortOrder }),
      );
      expect(windowed.status).toBe(200);
      expect(windowed.body.transactions.map((t: { txHash: string }) => t.txHash).sort()).toEqual(
        hashesOf(all.filter((t) => t.time >= from && t.time <= to)),
      );
    }
  });

  it('still refuses txTypes and timestamps with neither addresses nor l1ValidationId (§4.1 rule 1)', async () => {
    const queries: Record<string, string | number>[] = [
      { txTypes: 'BaseTx' },
      { startTimestamp: 1 },
      { endTimestamp: 2_000_000_000 },
    ];
    for (const query of queries) {
      const res = await fetchJson(url(query));
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.message).toContain(Object.keys(query)[0]);
      expect(res.body.message).toContain('l1ValidationId');
    }
  });
});

describe('point 8: pipeline fields for the §4.1 filters and the chains whose status is read', () => {
  it('txTypes takes exactly the PrimaryNetworkTxType values of enums.json', () => {
    expect([...PRIMARY_NETWORK_TX_TYPES]).toEqual(
      readJson('enums.json').dataApi.componentEnums.PrimaryNetworkTxType,
    );
  });

  const BAD: [string, Record<string, unknown>, string][] = [
    [
      'a type that does not exist, naming the allowed ones',
      { addresses: ['fuji10savf428nlg3ueuqelwajlduywj6l4amucezfc'], txTypes: ['BaseTx', 'StakeTx'] },
      `primary.txTypes.1: got "StakeTx"; expected a transaction type (PrimaryNetworkTxType): one of ${PRIMARY_NETWORK_TX_TYPES.join(', ')}`,
    ],
    [
      'types with nothing to narrow',
      { txTypes: ['BaseTx'] },
      'primary.txTypes: got ["BaseTx"]; expected addresses or l1ValidationIds beside it',
    ],
    [
      'a validation id in hex',
      { l1ValidationIds: [`0x${'ab'.repeat(32)}`] },
      'primary.l1ValidationIds.0: got "0xabab',
    ],
    [
      'a chain name for a blockchain id',
      { blockchains: ['C-Chain'] },
      'primary.blockchains.0: got "C-Chain"',
    ],
  ];

  it.each(BAD)('refuses %s, saying what it expected', async (_what, primary, says) => {
    const dir = mkdtempSync(join(tmpdir(), 'avalake-filters-'));
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ network: 'fuji', primary }));
    await expect(resolveExtractConfig({ pipeline: path, dataDir: join(dir, 'data') }, {})).rejects.toThrow(
      says,
    );
  });

  it('txTypes: the lake holds exactly the truth’s transactions of those types, then of the next run', async () => {
    const types = ['ExportTx', 'AddPermissionlessDelegatorTx'];
    const w = workspace(['p_chain_transactions'], (p) => {
      p.txTypes = types;
    });
    const truth = (pipeline: Pipeline) => {
      const out: Record<string, string[]> = {};
      for (const address of pipeline.primary.addresses)
        out[address] = hashesOf(
          pTransactions().filter((t) => types.includes(t.type) && t.parties.includes(address)),
        );
      return out;
    };
    const first = await extractOnce(w.pipelinePath, w.dataDir);
    expect(first.status).toBe('ok');
    // The filter is part of each partition, so another filter would start other partitions.
    expect(first.partitions.map((p) => p.partition.txTypes)).toEqual(
      w.pipeline.primary.addresses.map(() => 'AddPermissionlessDelegatorTx,ExportTx'),
    );
    const expected = truth(w.pipeline);
    expect(Object.values(expected).flat().length).toBeGreaterThan(10);
    expect(await lakeHashes(w.dataDir, 'address')).toEqual(
      Object.fromEntries(Object.entries(expected).filter(([, h]) => h.length > 0)),
    );

    emulator.advance(3 * 86_400);
    const second = await extractOnce(w.pipelinePath, w.dataDir);
    expect(second.status).toBe('ok');
    const later = truth(w.pipeline);
    expect(later).not.toEqual(expected);
    expect(await lakeHashes(w.dataDir, 'address')).toEqual(
      Object.fromEntries(Object.entries(later).filter(([, h]) => h.length > 0)),
    );
  });

  it('l1ValidationIds: each partition holds exactly its validation’s transactions, read without addresses', async () => {
    const ids = busiestValidations().slice(0, 2);
    const w = workspace(['p_chain_transactions'], (p) => {
      p.addresses = [];
      p.l1ValidationIds = ids;
    });
    const summary = await extractOnce(w.pipelinePath, w.dataDir);
    expect(summary.status).toBe('ok');
    const partitions = summary.partitions.map((p) => p.partition);
    expect(partitions).toHaveLength(ids.length);
    expect(partitions).toEqual(
      expect.arrayContaining(ids.map((l1ValidationId) => ({ network: 'fuji', l1ValidationId }))),
    );
    const expected = Object.fromEntries(
      ids.map((id) => [id, hashesOf(pTransactions().filter(ofValidation(id)))]),
    );
    expect(Object.values(expected).every((h) => h.length > 0)).toBe(true);
    expect(await lakeHashes(w.dataDir, 'l1ValidationId')).toEqual(expected);

    // The next run asks from its cursor: startTimestamp beside l1ValidationId, still without addresses.
    emulator.advance(2 * 86_400);
    const sent: URL[] = [];
    const next = await extractOnce(w.pipelinePath, w.dataDir, {}, (http) => ({
      send: (request) => {
        sent.push(new URL(request.url));
        return http.send(request);
      },
      close: () => http.close(),
    }));
    expect(next.status).toBe('ok');
    expect(sent.map((u) => [u.searchParams.get('l1ValidationId'), u.searchParams.has('addresses')])).toEqual(
      expect.arrayContaining(ids.map((id) => [id, false])),
    );
    expect(sent.every((u) => Number(u.searchParams.get('startTimestamp')) > 0)).toBe(true);
    for (const id of ids) expected[id] = hashesOf(pTransactions().filter(ofValidation(id)));
    expect(await lakeHashes(w.dataDir, 'l1ValidationId')).toEqual(expected);

    // The staging model reads a lake without an address column: one row per transaction, none tracked.
    await buildWarehouse({ dataDir: w.dataDir, select: 'stg_p_chain_transactions' });
    const staged = await queryWarehouse(
      w.dataDir,
      'select tx_hash, tracked_addresses from stg_p_chain_transactions order by tx_hash',
    );
    expect(staged.map((r) => r.tx_hash)).toEqual([...new Set(Object.values(expected).flat())].sort());
    expect(staged.every((r) => Array.isArray(r.tracked_addresses) && r.tracked_addresses.length === 0)).toBe(
      true,
    );
  });

  it('txTypes narrow the L1 validation partitions too', async () => {
    const [id] = busiestValidations();
    const w = workspace(['p_chain_transactions'], (p) => {
      p.addresses = [];
      p.l1ValidationIds = [id];
      p.txTypes = ['ConvertSubnetToL1Tx', 'RegisterL1ValidatorTx'];
    });
    expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
    const expected = hashesOf(
      pTransactions()
        .filter(ofValidation(id as string))
        .filter((t) => t.type === 'ConvertSubnetToL1Tx' || t.type === 'RegisterL1ValidatorTx'),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(await lakeHashes(w.dataDir, 'l1ValidationId')).toEqual({ [id as string]: expected });
  });

  it('blockchain_status: one row per blockchain the node lists, and the P-Chain', async () => {
    const rpc = async (method: string, params: Record<string, unknown> = {}) =>
      (
        await fetchJson(`${emulator.url}/fuji/ext/bc/P`, {
          method: 'POST',
          body: { jsonrpc: '2.0', id: 1, method, params },
        })
      ).body.result;
    const listed = ((await rpc('platform.getBlockchains')).blockchains as { id: string; name: string }[]).map(
      (b) => b.id,
    );
    const P = '11111111111111111111111111111111LpoYY';
    expect(listed.length).toBeGreaterThan(2);
    const w = workspace(['blockchain_status'], (p) => {
      p.blockchains = listed;
    });
    const summary = await extractOnce(w.pipelinePath, w.dataDir);
    expect(summary.status).toBe('ok');
    const truth: Record<string, string> = {};
    for (const id of [P, ...listed])
      truth[id] = (await rpc('platform.getBlockchainStatus', { blockchainID: id })).status;
    // The L1 chains are there, and the node tells them apart from the chains it validates.
    expect(new Set(Object.values(truth))).toEqual(new Set(['Validating', 'Created']));
    const rows = await queryLake(
      `select blockchainId, status from ${streamTable(w.dataDir, 'blockchain_status')} order by blockchainId`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.blockchainId, r.status]))).toEqual(truth);
    expect(rows).toHaveLength(1 + listed.length);

    await buildWarehouse({ dataDir: w.dataDir, select: 'stg_blockchain_status' });
    const [staged] = await queryWarehouse(
      w.dataDir,
      'select count(*)::int as n, count(distinct blockchain_id)::int as chains from stg_blockchain_status',
    );
    expect(staged).toEqual({ n: 1 + listed.length, chains: 1 + listed.length });
  });
});
