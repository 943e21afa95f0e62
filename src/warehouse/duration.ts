// Note: no imports. The live display of `avalake extract` uses this, and must not load DuckDB with it.

/**
 * A duration in its two largest units, as people read ages and times left: `40s`, `12m 5s`, `5h 2m`,
 * `3d 4h` (whole seconds; never negative). Freshness messages, `status` and the live display use it.
 */
export function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}
