/**
 * A value as JSON text with every object's keys in sorted order, so that the same content always gives
 * the same text, whatever order the keys came in. Version hashes (of a record still open, of a
 * snapshot's answer) are taken of it: a service that starts listing its fields in another order, or a
 * record kept as it came (the quick check) where an earlier run kept zod's copy, does not look changed.
 * Otherwise as JSON.stringify: undefined and functions are left out of objects and are null in arrays,
 * toJSON is honoured, and a bigint is written as its decimal string.
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return write(withJson.toJSON());
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const text = write(record[key]);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}
