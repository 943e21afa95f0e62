// The warehouse opens DuckDB the way the lake's compaction does: one helper, owned by the load layer.
export {
  type DuckDBDatabase,
  openDuckDB,
  queryRows,
  quoteIdent,
  quoteLiteral,
  withDuckDB,
} from '../load/duckdb.ts';
