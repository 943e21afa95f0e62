import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { canonicalJson } from '../../src/extract/strategies/canonical-json.ts';
import { commitRecordSchema, parseState, streamStateSchema } from '../../src/load/state.ts';
import { recordCheckOf } from '../../src/schemas/record-check.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce, fewMetrics } from '../helpers/extract.ts';

/**
 * Every command starts by reading the commit log's states (and the records after them), which the quick
 * record check passes as they are when zod would hand back the same values. Held here to zod on the
 * states of a real lake, commit records made of them, and mutants of both at every depth: the check
 * passes nothing zod rejects, and what it passes is what zod's copy would be.
 */

const ODD_VALUES: unknown[] = [undefined, null, -1, 1.5, 0, 'x', '', true, {}, [], [1, 2, 3]];

let emulator: Emulator;
const states: Record<string, unknown>[] = [];

beforeAll(async () => {
  emulator = await startEmulator();
  const w = demoWorkspace(emulator, (p) => {
    p.streams = ['validators', 'delegators', 'utxos', 'metrics', 'rewards'];
    fewMetrics(p);
  });
  // Twice: the second run confirms the unchanged snapshots (the states' confirmation pairs).
  for (let run = 0; run < 2; run++) expect((await extractOnce(w.pipelinePath, w.dataDir)).status).toBe('ok');
  const commits = join(w.dataDir, 'lake', '_commits');
  for (const stream of readdirSync(commits))
    for (const name of readdirSync(join(commits, stream)))
      if (name.startsWith('state-'))
        states.push(JSON.parse(readFileSync(join(commits, stream, name), 'utf8')));
  // What the states hold is what the check is tried on: checkpoints (records of any values) and
  // confirmations (pairs of numbers).
  const partitions = states.flatMap(
    (s) => s.partitions as { checkpoint: unknown; confirmations: unknown[] }[],
  );
  expect(partitions.some((p) => p.confirmations.length > 0)).toBe(true);
  expect(partitions.some((p) => typeof p.checkpoint === 'object' && p.checkpoint !== null)).toBe(true);
}, 120_000);

afterAll(() => emulator?.close());

/** A data commit and a compaction such as the writer makes, of a state's first partition and files. */
function commitRecordsOf(state: Record<string, unknown>): Record<string, unknown>[] {
  const [partition] = state.partitions as Record<string, unknown>[];
  const files = state.files as Record<string, unknown>[];
  if (!partition || files.length === 0) return [];
  const file = files[0] as Record<string, unknown>;
  const { seq: _, replaces: __, ...committed } = file;
  return [
    {
      format: 1,
      stream: state.stream,
      seq: 7,
      partition: partition.partition,
      runId: partition.runId,
      committedAt: partition.committedAt,
      parent: 6,
      files: [{ ...committed, staged: 'x.parquet' }],
      checkpoint: partition.checkpoint,
      observed: { sourceAt: 1_700_000_000_000, newestRecordAt: 1_700_000_000_000, cadence: 60 },
    },
    {
      format: 1,
      kind: 'compact',
      stream: state.stream,
      seq: 8,
      runId: partition.runId,
      committedAt: partition.committedAt,
      removed: [file.path],
      added: [{ ...committed, path: 'data/merged.parquet', replaces: [file.path] }],
    },
    {
      format: 1,
      kind: 'repair',
      stream: state.stream,
      seq: 9,
      runId: partition.runId,
      committedAt: partition.committedAt,
      partition: partition.partition,
      parent: 7,
      removed: [file.path],
    },
  ];
}

/**
 * Copies of a value with one thing changed at one place, at every depth (arrays by their first element):
 * the value there replaced by an odd one, an object's key removed or one added, an array's element added.
 */
function mutantsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [[1]];
    const rest = value.slice(1);
    return [
      ...ODD_VALUES.map((odd) => [odd, ...rest]),
      ...mutantsOf(value[0]).map((inner) => [inner, ...rest]),
      [...value, value[0]],
      [...value, 'y'],
    ];
  }
  if (typeof value !== 'object' || value === null) return [];
  const source = value as Record<string, unknown>;
  const out: unknown[] = [{ ...source, notInTheSchema: 1 }];
  for (const key of Object.keys(source)) {
    const { [key]: _, ...without } = source;
    out.push(without);
    for (const odd of ODD_VALUES) out.push({ ...source, [key]: odd });
    for (const inner of mutantsOf(source[key])) out.push({ ...source, [key]: inner });
  }
  return out;
}

describe('the quick check of what the commit log stores agrees with zod', () => {
  it.each([
    ['a stream state', streamStateSchema, () => states],
    ['a commit record', commitRecordSchema, () => states.flatMap(commitRecordsOf)],
  ] as const)('%s', (_, schema, real) => {
    const quick = recordCheckOf(schema);
    const values = real();
    expect(values.length).toBeGreaterThanOrEqual(5);
    // Every real one passes: none needs zod's copy.
    for (const value of values) expect(quick(structuredClone(value)), canonicalJson(value)).toBe(true);
    let passed = 0;
    let rejected = 0;
    for (const candidate of values.flatMap(mutantsOf)) {
      const parsed = schema.safeParse(structuredClone(candidate));
      if (!parsed.success) rejected++;
      if (!quick(candidate)) continue;
      passed++;
      // Never one zod rejects, and the very values zod's copy holds.
      expect(parsed.success, canonicalJson(candidate)).toBe(true);
      expect(canonicalJson(candidate)).toBe(canonicalJson(parsed.data));
    }
    // Mutants of both kinds: some still valid (an optional field removed, another count), most not.
    expect(passed).toBeGreaterThan(0);
    expect(rejected).toBeGreaterThan(passed);
  });

  it('parseState hands back what zod makes of a state, and names a malformed one', () => {
    for (const state of states) {
      const viaZod = streamStateSchema.parse(structuredClone(state));
      const parsed = parseState(structuredClone(state), 'state', 'here');
      expect(canonicalJson({ ...parsed, partitions: [...parsed.partitions.values()] })).toBe(
        canonicalJson(viaZod),
      );
    }
    const first = states[0] as { partitions: object[] };
    const broken = { ...first, partitions: [{ ...first.partitions[0], confirmations: [[1]] }] };
    expect(() => parseState(broken, 'commit log state s.json', 's.json')).toThrow(
      /^commit log state s\.json is malformed \(partitions\.0\.confirmations\.0: .*\); restore it from a backup$/,
    );
  });
});
