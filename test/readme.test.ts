import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { resolveExtractConfig } from '../src/extract/config.ts';
import { STREAMS } from '../src/extract/streams/index.ts';

/** The README says what the code does: its tables are checked against the code, where that is cheap. */
const README = readFileSync('README.md', 'utf8');

/** The body rows of the first Markdown table after a heading, as cells. */
function tableAfter(heading: string): string[][] {
  const lines = README.slice(README.indexOf(`\n${heading}\n`)).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const length = lines.slice(first).findIndex((l) => !l.startsWith('|'));
  return lines.slice(first + 2, first + length).map((row) =>
    row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );
}

const STRATEGY_WORDS: Record<string, string> = {
  'newest-first': 'newest-first',
  cursor: 'cursor',
  snapshot: 'snapshot',
  'height walk': 'height-walk',
};

it('the Streams table names every stream once, with its strategy and, where it gives one in full, its route', async () => {
  const rows = tableAfter('## Streams');
  const { pipeline } = await resolveExtractConfig(
    { pipeline: 'pipelines/demo.json', streams: STREAMS.map((s) => s.name).join(',') },
    {},
  );
  const described = new Map<string, { endpoint: string; strategy: string }>();
  for (const [names = '', endpoint = '', strategy = ''] of rows)
    for (const name of names.matchAll(/`([a-z0-9_]+)`/g)) {
      expect(described.has(name[1] as string), `${name[1]} twice`).toBe(false);
      described.set(name[1] as string, { endpoint, strategy });
    }
  expect([...described.keys()].sort()).toEqual(STREAMS.map((s) => s.name).sort());
  for (const stream of STREAMS) {
    const row = described.get(stream.name);
    const word = Object.keys(STRATEGY_WORDS).find((w) => row?.strategy.startsWith(w));
    expect(word && STRATEGY_WORDS[word], `${stream.name}: "${row?.strategy}"`).toBe(stream.strategy);
    // A route written out whole (`GET /v1/…`) is the stream's own.
    const written = /`GET (\/[^`?[\s]+)/.exec(row?.endpoint ?? '')?.[1];
    const partition = stream.partitions(pipeline)[0];
    if (!written || !partition || stream.strategy === 'height-walk') continue;
    const request =
      stream.strategy === 'snapshot'
        ? stream.request(pipeline, partition)
        : stream.request(pipeline, partition, undefined);
    if (request.kind === 'http') expect(written, stream.name).toBe(request.route);
  }
});

it('the Layout section names folders that exist', () => {
  const layout = README.slice(README.indexOf('\n## Layout\n'));
  const block = layout.slice(layout.indexOf('```'), layout.indexOf('```', layout.indexOf('```') + 3));
  const folders = [...block.matchAll(/^([a-z][\w./-]*\/)\s/gm)].map((m) => m[1] as string);
  expect(folders.length).toBeGreaterThan(8);
  for (const folder of folders) expect(existsSync(folder), folder).toBe(true);
});

it('the Your own models table names every header a model may have, each once', () => {
  const written = tableAfter('## Your own models').flatMap(([header = '']) =>
    [...header.matchAll(/`-- ([a-z_]+):/g)].map((m) => m[1] as string),
  );
  // The headers parseModel reads: each is one `key === '…'` branch of it.
  const read = [...readFileSync('src/warehouse/models.ts', 'utf8').matchAll(/key === '([a-z_]+)'/g)].map(
    (m) => m[1] as string,
  );
  expect(new Set(written).size).toBe(written.length);
  expect([...written].sort()).toEqual([...new Set(read)].sort());
});
