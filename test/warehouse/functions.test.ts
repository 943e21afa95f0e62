import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows, withDuckDB } from '../../src/warehouse/duckdb.ts';
import { defineWarehouseFunctions } from '../../src/warehouse/functions.ts';
import { isKeepableWhole } from '../../src/warehouse/incremental.ts';
import { parseModel } from '../../src/warehouse/models.ts';

/** The rate as apr_realized defined it before `_lake.annual_rate`: HUGEINT arithmetic throughout. */
const EXACT = `cast((cast(amount as hugeint) * 31536000 * 1000000000000) // (cast(stake as hugeint) * seconds) as decimal(38, 0)) * 0.000000000001`;

describe('_lake.annual_rate', () => {
  it('equals the HUGEINT division on rates near whole units, large and small operands, and bad ones', async () => {
    await withDuckDB(':memory:', async (db) => {
      await defineWarehouseFunctions(db);
      await db.run(`create table cases as
        -- Seasoned stakes and rewards of every size: random, so the fast path meets every fraction.
        select cast(floor(random() * pow(10, 1 + random() * 16)) as decimal(38, 0)) as amount,
               cast(1 + floor(random() * pow(10, 9 + random() * 8)) as decimal(38, 0)) as stake,
               cast(1 + floor(random() * 126144000) as bigint) as seconds
        from range(200000)
        union all
        -- A year's stake of s × 10^12 makes rate = amount / s: whole units exactly, and one nAVAX to either
        -- side of them (the estimate's fraction near 0 and near 1).
        select cast(q * s + r as decimal(38, 0)), cast(s as decimal(38, 0)) * 1000000000000, 31536000
        from range(1, 200) a(q), (values (7), (1000003), (999999937)) b(s), (values (-1), (0), (1)) c(r)
        where q * s + r >= 0
        union all
        -- Rates of 2^40 units (1.1) and above, negative amounts, and stakes or seconds of zero.
        select * from (values
          (1099511627776000::decimal(38, 0), 1000000000000::decimal(38, 0), 31536000::bigint),
          (1099511627775999, 1000000000000, 31536000),
          (720000000000000000, 1, 1), -- the whole supply on one nAVAX for a second
          (-5, 3, 7),
          (-1000000000000, 1000000000000, 31536000),
          (10, 0, 100),
          (10, 100, 0),
          (0, 5, 5)
        )`);
      const [counts] = await queryRows(
        db,
        `select count(*) as cases,
                count(*) filter (where _lake.annual_rate(amount, stake, seconds) is distinct from ${EXACT}) as differ,
                count(*) filter (where ${EXACT} is null) as undefined_rates
         from cases`,
      );
      expect(Number(counts?.cases)).toBeGreaterThan(201_000);
      expect(counts?.differ).toBe('0');
      // Stakes or seconds of zero have no rate, either way.
      expect(counts?.undefined_rates).toBe('2');
      const [whole] = await queryRows(
        db,
        `select _lake.annual_rate(8, 100, 31536000)::varchar as eight_percent,
                _lake.annual_rate(1, 3, 31536000)::varchar as a_third`,
      );
      expect(whole).toEqual({ eight_percent: '0.080000000000', a_third: '0.333333333333' });
    });
  });
});

describe('a model calling a function of _lake', () => {
  it('can be kept whole between builds; one reading the lake record rewritten by every build cannot', () => {
    const root = mkdtempSync(join(tmpdir(), 'avalake-models-'));
    mkdirSync(join(root, 'marts'));
    const model = (name: string, sql: string) => {
      writeFileSync(join(root, 'marts', `${name}.sql`), sql);
      return parseModel(join(root, 'marts', `${name}.sql`), root);
    };
    const calls = model(
      'rates',
      'select _lake.annual_rate (reward, stake, seconds) as apr from stg_rewards\n',
    );
    const reads = model('reads', "select * from _lake.partitions where stream = 'rewards'\n");
    expect(isKeepableWhole(calls)).toBe(true);
    expect(isKeepableWhole(reads)).toBe(false);
  });
});
