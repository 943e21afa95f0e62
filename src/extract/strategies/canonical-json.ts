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

// Built by concatenation, keys quoted once per name: a snapshot's every record is written this way on
// every run (its answer's hash), and arrays of parts joined cost twice as much.
function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return `"${value}"`;
    case 'object':
      break;
    default:
      return undefined; // undefined, a function, a symbol
  }
  if (value === null) return 'null';
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return write(withJson.toJSON());
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i > 0 ? ',' : ''}${write(value[i]) ?? 'null'}`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    const text = write(record[key]);
    if (text !== undefined) out += `${out.length > 1 ? ',' : ''}${quotedKey(key)}:${text}`;
  }
  return `${out}}`;
}

/** Keys as JSON strings, remembered: records repeat their schema's few names (bounded, for any others). */
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < 4096) quotedKeys.set(key, quoted);
  }
  return quoted;
}
