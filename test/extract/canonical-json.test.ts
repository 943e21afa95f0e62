import { expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import type { HttpClient } from '../../src/extract/http.ts';
import { canonicalJson } from '../../src/extract/strategies/canonical-json.ts';
import { readLakeState } from '../../src/load/index.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { demoWorkspace, extractOnce } from '../helpers/extract.ts';

/** The value with every object's keys in the opposite order: the same content, listed otherwise. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversed(v)]),
  );
}

it('writes the same text for the same content, whatever the order of the keys', () => {
  const record = { b: 1, a: { d: [3, { f: 'x', e: null }], c: true }, g: '2' };
  expect(canonicalJson(record)).toBe('{"a":{"c":true,"d":[3,{"e":null,"f":"x"}]},"b":1,"g":"2"}');
  expect(canonicalJson(reversed(record))).toBe(canonicalJson(record));
  // Otherwise as JSON.stringify: JSON.parse gives back the value.
  expect(JSON.parse(canonicalJson(record))).toEqual(record);
});

it('leaves out what JSON leaves out, and writes what JSON cannot as JSON.stringify would', () => {
  expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, () => 1] })).toBe('{"c":[null,null]}');
  expect(canonicalJson({ at: new Date(Date.UTC(2026, 0, 2)) })).toBe('{"at":"2026-01-02T00:00:00.000Z"}');
  expect(canonicalJson({ n: 12345678901234567890n })).toBe('{"n":"12345678901234567890"}');
  expect(canonicalJson(undefined)).toBe('null');
  expect(canonicalJson('a"b')).toBe('"a\\"b"');
});

/** JSON.stringify of a copy whose objects have their keys inserted in sorted order: what canonical means. */
function sortedStringify(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
    );
  };
  return JSON.stringify(sorted(value));
}

it('writes every number, string and key exactly as JSON.stringify does', () => {
  const odd = {
    numbers: [
      0,
      -0,
      1.5,
      -2e-7,
      1e21,
      123456789012345680000,
      Number.MAX_SAFE_INTEGER,
      NaN,
      Infinity,
      -Infinity,
    ],
    strings: ['', 'quote " and \\ back', 'line\nbreak\ttab', '\u0001\u001f', 'é ☃ 😀', '\ud800 lone'],
    'key "quoted"': { '\u00e9': 1, Z: 4, a: 5, '': 6, 'b c': 7 },
    nested: [[], {}, [null, true, false], { x: [{ y: 'z' }] }],
  };
  expect(canonicalJson(odd)).toBe(sortedStringify(odd));
  expect(canonicalJson(reversed(odd))).toBe(sortedStringify(odd));
  // Keys that look like array indexes sort as text too (an object lists them first, in numeric order).
  expect(canonicalJson({ 9: 'a', 10: 'b', x: 'c', '': 'd' })).toBe('{"":"d","10":"b","9":"a","x":"c"}');
});

it('a source that lists its fields in another order changes nothing in the lake', async () => {
  const emulator: Emulator = await startEmulator();
  try {
    const { pipelinePath, dataDir } = demoWorkspace(emulator);
    // Delegations still active are open records (re-read and compared by version each run); the
    // validators and the supply are snapshots (compared by the hash of the whole answer).
    const streams = 'delegators,validators,current_supply';
    const first = await extractOnce(pipelinePath, dataDir, { streams });
    expect(first.status).toBe('ok');
    const open = [...(await readLakeState(dataDir)).values()]
      .filter((s) => s.stream === 'delegators')
      .flatMap((s) => [...s.partitions.values()])
      .reduce((n, p) => n + Object.keys((p.checkpoint as { open?: object }).open ?? {}).length, 0);
    expect(open, 'the demo has delegations still open').toBeGreaterThan(0);

    const again = await extractOnce(pipelinePath, dataDir, { streams }, (http: HttpClient) => ({
      async send(request) {
        const answer = await http.send(request);
        if (answer.status !== 200) return answer;
        return { ...answer, text: JSON.stringify(reversed(JSON.parse(answer.text))) };
      },
      close: () => http.close(),
    }));
    expect(again.status).toBe('ok');
    expect(again.partitions.map((p) => [p.stream, p.rows]).filter(([, rows]) => rows !== 0)).toEqual([]);
  } finally {
    await emulator.close();
  }
});
