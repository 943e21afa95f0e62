import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildWarehouse, DEFAULT_MODELS_DIR } from '../../src/warehouse/build.ts';
import { loadModels, ModelError } from '../../src/warehouse/models.ts';
import { expandTemplates, newestPerKey } from '../../src/warehouse/templates.ts';
import { queryWarehouse } from '../helpers/warehouse.ts';

/** Versions of records keyed by (chain, id), as a stream appends them; `state` tells them apart. */
const VERSIONS = `-- description: every version of every thing
select * from (values
    (1, 'a', timestamptz '2026-11-01 00:00:00+00', 'pending'),
    (1, 'a', timestamptz '2026-11-03 00:00:00+00', 'completed'),
    (1, 'a', timestamptz '2026-11-02 00:00:00+00', 'active'),
    (2, 'a', timestamptz '2026-11-01 00:00:00+00', 'only'),
    (1, 'b', timestamptz '2026-11-04 00:00:00+00', 'old'),
    (1, 'b', timestamptz '2026-11-05 00:00:00+00', 'tie-x'),
    (1, 'b', timestamptz '2026-11-05 00:00:00+00', 'tie-y'),
    (null, 'c', timestamptz '2026-11-01 00:00:00+00', 'null-old'),
    (null, 'c', timestamptz '2026-11-06 00:00:00+00', 'null-new')
) as t(chain, id, _extracted_at, state)
`;

const NEWEST = `-- description: the newest version of each thing
with source as (
    select * from stg_thing_versions
),

newest as (
    select * from {{ newest('source', 'chain, id') }}
)

select * from newest
`;

function modelsDir(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'avalake-templates-')), 'models');
  for (const [path, sql] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), sql);
  }
  return dir;
}

describe("{{ newest('relation', 'key') }}", () => {
  it('keeps exactly the newest version of each key: the latest _extracted_at, one row per key, whole', async () => {
    const models = modelsDir({
      'staging/stg_thing_versions.sql': VERSIONS,
      'staging/stg_things.sql': NEWEST,
    });
    // The relation it names is a dependency like any other.
    expect(loadModels(models).find((m) => m.name === 'stg_things')?.dependsOn).toEqual([
      'stg_thing_versions',
    ]);
    const dataDir = join(models, '..', 'data');
    mkdirSync(dataDir);
    await buildWarehouse({ dataDir, modelsDir: models });
    const rows = await queryWarehouse(
      dataDir,
      `select chain, id, strftime(_extracted_at, '%d') as day, state from stg_things order by id, chain nulls last`,
    );
    // A tie on _extracted_at keeps one of the tied versions, as row_number over the tie always did.
    const tie = rows.find((r) => r.id === 'b');
    expect(['tie-x', 'tie-y']).toContain(tie?.state);
    expect(rows).toEqual([
      { chain: 1, id: 'a', day: '03', state: 'completed' },
      { chain: 2, id: 'a', day: '01', state: 'only' },
      { chain: 1, id: 'b', day: '05', state: tie?.state },
      { chain: null, id: 'c', day: '06', state: 'null-new' },
    ]);
  });

  it('is how every staging model keeps one row per key: none writes its own row_number', () => {
    const staging = join(DEFAULT_MODELS_DIR, 'staging');
    const own = readdirSync(staging).filter((f) =>
      /row_number\s*\(/i.test(readFileSync(join(staging, f), 'utf8')),
    );
    expect(own).toEqual([]);
    const models = loadModels(DEFAULT_MODELS_DIR).filter((m) => m.layer === 'staging');
    const deduped = models.filter((m) => m.sql.includes('qualify row_number() over (partition by'));
    expect(deduped.length).toBeGreaterThanOrEqual(31);
    expect(models.filter((m) => m.sql.includes('{{ newest'))).toEqual([]);
  });

  it('expands to the dedup over the relation and leaves {{ lake() }} to the build', () => {
    const { sql, problem } = expandTemplates(
      "with source as (select * from {{ lake('rewards') }})\nselect * from {{newest( 'source' , 'chain, \"timestamp\"' )}}",
    );
    expect(problem).toBeUndefined();
    expect(sql).toBe(
      `with source as (select * from {{ lake('rewards') }})\nselect * from ${newestPerKey('source', 'chain, "timestamp"')}`,
    );
  });

  it.each([
    ["{{ newest('source') }}", 'templates are'],
    ["{{ newest('source', '') }}", 'newest takes'],
    ["{{ newest('source s', 'id') }}", 'newest takes'],
    ['{{ newest("source", "id") }}', 'templates are'],
    ["{{ latest('source', 'id') }}", 'templates are'],
  ])('refuses %s with what to write instead (ModelError, exit 2)', (call, says) => {
    expect(expandTemplates(`select * from ${call}`).problem).toContain(says);
    const models = modelsDir({ 'staging/stg_bad.sql': `-- description: bad\nselect * from ${call}\n` });
    expect(() => loadModels(models)).toThrow(ModelError);
    expect(() => loadModels(models)).toThrow(/stg_bad\.sql: .*newest\('\w+', 'key\[, key\]'\)/);
  });
});

describe('{{ this }} and incremental_after', () => {
  const source =
    "-- description: s\n-- unique: id\n-- incremental: true\nselect * from {{ lake('rewards') }}\n";
  const other = "-- description: o\nselect * from {{ lake('utxos') }}\n";
  const mart = (header: string, from = 'stg_s') =>
    `-- description: m\n${header}-- column: id: the key\nselect id from ${from} union all select id from {{ this }}\n`;

  it('reads a model marked incremental_after: its source, other models, and its own rows', () => {
    const models = loadModels(
      modelsDir({
        'staging/stg_s.sql': source,
        'staging/stg_o.sql': other,
        'marts/m.sql': mart('-- unique: id\n-- incremental_after: id from stg_s\n', 'stg_s, stg_o'),
      }),
    );
    const m = models.find((x) => x.name === 'm');
    expect(m?.incrementalAfter).toEqual({ column: 'id', source: 'stg_s' });
    expect(m?.dependsOn).toEqual(['stg_o', 'stg_s']);
  });

  it.each([
    [
      '{{ this }} without incremental_after',
      mart('-- unique: id\n'),
      /m\.sql: \{\{ this \}\} .* "-- incremental_after: column from model"/,
    ],
    [
      'no key',
      mart('-- incremental_after: id from stg_s\n'),
      /m\.sql: an incremental_after model declares its key/,
    ],
    [
      'a model it does not read',
      mart('-- unique: id\n-- incremental_after: id from stg_o\n'),
      /m\.sql: incremental_after must name a model it reads/,
    ],
    [
      'a malformed header',
      mart('-- unique: id\n-- incremental_after: stg_s.id\n'),
      /incremental_after needs "column from model"/,
    ],
    [
      'no documented columns',
      mart('-- unique: id\n-- incremental_after: id from stg_s\n').replace('-- column: id: the key\n', ''),
      /documents every column/,
    ],
    ['{{ self }}', '-- description: m\nselect * from {{ self }}\n', /templates are .*\{\{ this \}\}/],
    [
      'compare_to_last on a view',
      '-- description: m\n-- materialized: view\n-- compare_to_last: true\nselect 1 as x\n',
      /m\.sql: a compare_to_last model is a table built whole/,
    ],
    [
      'compare_to_last not true or false',
      '-- description: m\n-- compare_to_last: yes\nselect 1 as x\n',
      /m\.sql: compare_to_last must be true or false, got "yes"/,
    ],
  ])('refuses %s (ModelError, exit 2)', (_, sql, says) => {
    const models = modelsDir({ 'staging/stg_s.sql': source, 'staging/stg_o.sql': other, 'marts/m.sql': sql });
    expect(() => loadModels(models)).toThrow(ModelError);
    expect(() => loadModels(models)).toThrow(says);
  });
});
