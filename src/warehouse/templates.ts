/**
 * The templates a model's SQL may hold. Each stands where a table would, so a model stays plain SQL:
 *   {{ lake('stream') }}                the stream's committed rows, filled in at build time (`withLake`)
 *   {{ newest('relation', 'k1, k2') }}  the relation's newest version of each key, expanded when the
 *                                       model is read
 *   {{ this }}                          the model's own rows as the last build left them (a model marked
 *                                       `-- incremental_after:` only), filled in at build time (`withThis`)
 * The staging models keep one row per key through `newest`, so how a version is chosen is written once.
 */

const LAKE_REF = /\{\{\s*lake\(\s*'([a-z0-9_]+)'\s*\)\s*\}\}/g;
const NEWEST_REF = /\{\{\s*newest\(\s*'([^']*)'\s*,\s*'([^']*)'\s*\)\s*\}\}/g;
const THIS_REF = /\{\{\s*this\s*\}\}/g;
const ANY_REF = /\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*(\(|\}\})/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const USAGE = "templates are {{ lake('stream') }}, {{ newest('relation', 'key[, key]') }} and {{ this }}";

/** The streams a model's SQL reads through `{{ lake('<stream>') }}`, each once, in order. */
export const lakeStreamsOf = (sql: string): string[] => [
  ...new Set([...sql.matchAll(LAKE_REF)].map((m) => m[1] as string)),
];

/** Replaces each `{{ lake('<stream>') }}` by the relation `read(stream)` returns. */
export const replaceLakeRefs = (sql: string, read: (stream: string) => string): string =>
  sql.replace(LAKE_REF, (_, stream: string) => read(stream));

/** Whether a model's SQL reads its own rows through `{{ this }}`. */
export const readsThis = (sql: string): boolean => sql.search(THIS_REF) >= 0;

/** Replaces each `{{ this }}` by `relation`: the model's table, or an empty stand-in when built whole. */
export const withThis = (sql: string, relation: string): string => sql.replace(THIS_REF, () => relation);

/**
 * The relation's rows, one per key: the version read last (`_extracted_at desc`). Versions read at the
 * same instant are equally new, and which of them is kept is unspecified (`row_number` over a tie).
 *
 * Most keys have one version, so only keys seen more than once are ranked: a window (or the aggregate
 * DuckDB turns it into) over every row carries every column of every row through a sort or a hash
 * table, which cost most of a staging build. Keys are told apart by their hash first: a key whose hash
 * is seen once has one row, kept whole as it streams past; the few hashes seen more than once (a key's
 * versions, and any two keys whose hashes collide) go through `row_number` by the keys themselves, so
 * a collision only costs a little ranking, never a wrong row.
 *
 * Note: the relation is read three times, so a CTE it names should be `as not materialized`: each read
 * is then a scan of the lake's Parquet, cheaper than DuckDB copying every row into a temporary result.
 */
export const newestPerKey = (relation: string, keys: string): string => `(
    with __several as (
        select hash(${keys}) as __key from ${relation} group by all having count(*) > 1
    )
    select ${relation}.* from ${relation} anti join __several on hash(${keys}) = __several.__key
    union all
    select * from (select ${relation}.* from ${relation} semi join __several on hash(${keys}) = __several.__key)
    qualify row_number() over (partition by ${keys} order by _extracted_at desc) = 1
)`;

/**
 * Expands `{{ newest(…) }}`, leaving `{{ lake(…) }}` for the build. `problem`: a malformed `newest` or a
 * template of another name, quoted.
 */
export function expandTemplates(sql: string): { sql: string; problem?: string } {
  let problem: string | undefined;
  const expanded = sql.replace(NEWEST_REF, (call: string, relation: string, keys: string) => {
    if (IDENTIFIER.test(relation.trim()) && keys.trim() !== '')
      return newestPerKey(relation.trim(), keys.trim());
    problem ??= `${call}: newest takes a relation's name and its key, as newest('source', 'key[, key]')`;
    return call;
  });
  if (problem) return { sql, problem };
  const rest = withThis(
    replaceLakeRefs(expanded, () => 'lake'),
    'this',
  );
  const unknown = ANY_REF.exec(rest);
  if (unknown) return { sql, problem: `"${lineAt(rest, unknown.index).trim()}": ${USAGE}` };
  return { sql: expanded };
}

function lineAt(text: string, at: number): string {
  const end = text.indexOf('\n', at);
  return text.slice(text.lastIndexOf('\n', at) + 1, end < 0 ? undefined : end);
}
