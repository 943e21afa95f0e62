import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Example instances built from the providers' published OpenAPI documents. The documents give
 * examples per property (`examples: [...]` or `example`), not whole responses; an instance takes each
 * property's first example, and where a property has none, a neutral value of its declared type
 * (`"0"` for a string: it passes both text and digit-string checks; `0` for a number). Every property
 * of an object is filled in, optional ones included, so a stream's schema meets every documented field.
 */

type Json = Record<string, unknown>;

const SPEC_DIR = process.env.AVALAKE_SHARED_DIR
  ? `${process.env.AVALAKE_SHARED_DIR}/reference/openapi`
  : fileURLToPath(new URL('../../../shared/reference/openapi/', import.meta.url));

export type ExampleDocument = 'data' | 'metrics' | 'rpc';

const FILES: Record<ExampleDocument, string> = {
  data: 'data-api.glacier.openapi.json',
  metrics: 'metrics-api.popsicle.openapi.json',
  rpc: 'pchain-platformvm.jsonrpc.openapi.yaml',
};

const cache = new Map<ExampleDocument, Json>();
function documentOf(doc: ExampleDocument): Json {
  let d = cache.get(doc);
  if (!d) {
    const text = readFileSync(`${SPEC_DIR}/${FILES[doc]}`, 'utf8');
    d = (FILES[doc].endsWith('.yaml') ? parseYamlSubset(text) : JSON.parse(text)) as Json;
    cache.set(doc, d);
  }
  return d;
}

export interface ExampleOptions {
  /** For a `oneOf`/`anyOf`, the component schema name of the branch to build (default: the first). */
  variant?: string;
}

/** An example instance of a component schema, e.g. `exampleOf('data', 'PChainTransaction')`. */
export function exampleOf(doc: ExampleDocument, schemaName: string, options: ExampleOptions = {}): unknown {
  const document = documentOf(doc);
  const schema = schemasOf(document)[schemaName];
  if (schema === undefined) throw new Error(`OpenAPI ${doc}: no component schema ${schemaName}`);
  return build(document, schema, options, 0);
}

/**
 * An example of the JSON body an operation answers with (status 200 unless told), e.g.
 * `responseExampleOf('data', 'GET', '/v1/networks/{network}/blockchains/{blockchainId}/vertices')`; for
 * the node RPC, the path is `/ext/bc/P#platform.getBalance` and the method POST.
 */
export function responseExampleOf(
  doc: ExampleDocument,
  method: string,
  path: string,
  options: ExampleOptions & { status?: number } = {},
): unknown {
  const document = documentOf(doc);
  const item = (document.paths as Record<string, Json> | undefined)?.[path];
  const op = item?.[method.toLowerCase()] as Json | undefined;
  if (!op) throw new Error(`OpenAPI ${doc}: no operation ${method} ${path}`);
  const response = (op.responses as Record<string, Json>)[String(options.status ?? 200)];
  const content = (response?.content ?? {}) as Record<string, Json>;
  const type = Object.keys(content).find((t) => t === 'application/json' || t.endsWith('+json'));
  if (!type) throw new Error(`OpenAPI ${doc}: ${method} ${path} documents no JSON body`);
  return build(document, content[type]?.schema, options, 0);
}

const schemasOf = (document: Json) => ((document.components as Json)?.schemas ?? {}) as Record<string, Json>;

const MAX_DEPTH = 12;

function resolve(document: Json, schema: Json): Json {
  let s = schema;
  for (let i = 0; i < 16 && typeof s.$ref === 'string'; i++) {
    const name = (s.$ref as string).split('/').pop() as string;
    // Sibling keywords of a $ref (its examples, its description) win over the referenced schema's.
    const { $ref: _ref, ...siblings } = s;
    s = { ...(schemasOf(document)[name] ?? {}), ...siblings };
  }
  return s;
}

function firstExample(schema: Json): { found: boolean; value?: unknown } {
  if (Array.isArray(schema.examples) && schema.examples.length > 0)
    return { found: true, value: schema.examples[0] };
  // Note: a few properties carry `examples` as a single object rather than a list.
  if (schema.examples !== undefined && !Array.isArray(schema.examples))
    return { found: true, value: schema.examples };
  if (schema.example !== undefined) return { found: true, value: schema.example };
  if (schema.const !== undefined) return { found: true, value: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return { found: true, value: schema.enum[0] };
  return { found: false };
}

function build(document: Json, raw: unknown, options: ExampleOptions, depth: number): unknown {
  if (raw === undefined || raw === null || typeof raw !== 'object') return null;
  const schema = resolve(document, raw as Json);
  const example = firstExample(schema);
  if (example.found) return example.value;
  if (depth > MAX_DEPTH) return null;
  const union = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (union && union.length > 0) {
    const named = options.variant
      ? union.find((b) => String(b.$ref ?? '').endsWith(`/${options.variant}`))
      : undefined;
    // The variant applies to the outermost union only.
    const { variant: _v, ...rest } = options;
    return build(document, named ?? union.find((b) => b.type !== 'null') ?? union[0], rest, depth + 1);
  }
  if (Array.isArray(schema.allOf))
    return Object.assign(
      {},
      ...(schema.allOf as Json[]).map((part) => build(document, part, options, depth + 1) as Json),
    );
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const out: Json = {};
    for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>))
      out[key] = build(document, property, options, depth + 1);
    return out;
  }
  if (type === 'array') return [build(document, schema.items, options, depth + 1)];
  if (type === 'string') return '0';
  if (type === 'number' || type === 'integer') return 0;
  if (type === 'boolean') return false;
  return null;
}

/**
 * Note: the project has no YAML dependency; the node's OpenAPI document uses only block maps, block
 * lists, plain or quoted scalars, `{}`/`[]` and folded (`>-`) text, which this reads.
 */
export function parseYamlSubset(text: string): unknown {
  const lines = text
    .split('\n')
    .map((raw) => ({ indent: raw.length - raw.trimStart().length, body: raw.trim() }))
    .filter((l) => l.body !== '' && !l.body.startsWith('#'));
  let i = 0;
  const scalar = (v: string): unknown => {
    if (v === '{}') return {};
    if (v === '[]') return [];
    if (/^'.*'$/.test(v)) return v.slice(1, -1).replace(/''/g, "'");
    if (/^".*"$/.test(v)) return JSON.parse(v);
    if (v === 'true' || v === 'false') return v === 'true';
    if (v === 'null' || v === '~') return null;
    if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
    return v;
  };
  const folded = (indent: number): string => {
    const parts: string[] = [];
    while (i < lines.length && (lines[i] as { indent: number }).indent > indent)
      parts.push((lines[i++] as { body: string }).body);
    return parts.join(' ');
  };
  const value = (rest: string, indent: number): unknown => {
    if (rest === '>-' || rest === '>' || rest === '|' || rest === '|-') return folded(indent);
    if (rest !== '') return scalar(rest);
    const next = lines[i];
    if (!next || next.indent < indent || (next.indent === indent && !next.body.startsWith('- '))) return null;
    return block(next.indent);
  };
  const entry = (body: string, indent: number, into: Record<string, unknown>) => {
    const m = /^('[^']*'|"[^"]*"|[^:]+?):(?:\s+(.*))?$/.exec(body);
    if (!m) throw new Error(`YAML subset: cannot read "${body}"`);
    const key = scalar(m[1] as string) as string;
    into[String(key)] = value((m[2] ?? '').trim(), indent);
  };
  const block = (indent: number): unknown => {
    const first = lines[i] as { body: string };
    if (first.body.startsWith('- ') || first.body === '-') {
      const list: unknown[] = [];
      while (
        i < lines.length &&
        (lines[i] as { indent: number }).indent === indent &&
        (lines[i] as { body: string }).body.startsWith('-')
      ) {
        const item = (lines[i] as { body: string }).body.slice(1).trim();
        i++;
        if (/^('[^']*'|"[^"]*"|[^:'"]+?):(\s|$)/.test(item)) {
          // A map inside a list: its first key sits after the dash, the rest two columns in.
          const map: Record<string, unknown> = {};
          entry(item, indent + 2, map);
          while (i < lines.length && (lines[i] as { indent: number }).indent === indent + 2) {
            const l = lines[i++] as { body: string };
            entry(l.body, indent + 2, map);
          }
          list.push(map);
        } else list.push(scalar(item));
      }
      return list;
    }
    const map: Record<string, unknown> = {};
    while (
      i < lines.length &&
      (lines[i] as { indent: number }).indent === indent &&
      !(lines[i] as { body: string }).body.startsWith('- ')
    ) {
      const l = lines[i++] as { body: string };
      entry(l.body, indent, map);
    }
    return map;
  };
  return block(0);
}
