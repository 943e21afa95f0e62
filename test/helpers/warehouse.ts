import { join } from 'node:path';
import { expect } from 'vitest';
import { type BuildResult, WAREHOUSE_FILE } from '../../src/warehouse/build.ts';
import { queryRows, quoteIdent, quoteLiteral, withDuckDB } from '../../src/warehouse/duckdb.ts';

/** Runs a query on a data directory's built warehouse, read-only; DECIMALs come back as exact strings. */
export const queryWarehouse = (dataDir: string, sql: string): Promise<Record<string, unknown>[]> =>
  withDuckDB(join(dataDir, WAREHOUSE_FILE), (db) => queryRows(db, sql), { readOnly: true });

/** How a build built a model: full, incremental or unchanged (undefined: not built). */
export const modeOf = (result: BuildResult, name: string) => result.built.find((b) => b.name === name)?.mode;

/** The UTC day (YYYY-MM-DD) of a Unix time in seconds. */
export const utcDay = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

/** An integer count of 10^-scale units as the exact decimal DuckDB prints (`1234n, 2` → `12.34`). */
export function scaled(units: bigint, scale: number): string {
  const sign = units < 0n ? '-' : '';
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/**
 * Two warehouse files side by side: each main table or view (`name TYPE`), its rows, and the rows only
 * one of the two has (counted with duplicates). Equal warehouses have the same names and no such rows.
 */
async function warehouseDifferences(
  a: string,
  b: string,
): Promise<{ names: string[]; otherNames: string[]; tables: Record<string, unknown>[] }> {
  return withDuckDB(':memory:', async (db) => {
    await db.run(`attach ${quoteLiteral(a)} as a (read_only)`);
    await db.run(`attach ${quoteLiteral(b)} as b (read_only)`);
    const namesIn = async (catalog: string) =>
      (
        await queryRows(
          db,
          `select table_name, table_type from information_schema.tables where table_catalog = '${catalog}' and table_schema = 'main' order by 1`,
        )
      ).map((r) => `${r.table_name} ${r.table_type}`);
    const names = await namesIn('a');
    const tables: Record<string, unknown>[] = [];
    for (const entry of names) {
      const t = quoteIdent(entry.split(' ')[0] as string);
      const [diff] = await queryRows(
        db,
        `select (select count(*) from a.${t}) as rows,
                (select count(*) from (select * from a.${t} except all select * from b.${t})) as only_a,
                (select count(*) from (select * from b.${t} except all select * from a.${t})) as only_b`,
      );
      tables.push({ table: entry, ...diff });
    }
    return { names, otherNames: await namesIn('b'), tables };
  });
}

/**
 * Expects two warehouse files to hold the same tables and views with the same rows (duplicates counted);
 * returns their names (`name TYPE`) for what a test expects among them.
 */
export async function expectSameWarehouse(a: string, b: string): Promise<string[]> {
  const { names, otherNames, tables } = await warehouseDifferences(a, b);
  expect(names).toEqual(otherNames);
  for (const t of tables) expect(t).toEqual({ table: t.table, rows: t.rows, only_a: '0', only_b: '0' });
  return names;
}
