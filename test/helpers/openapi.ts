import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * The providers' published OpenAPI 3.1 documents, compiled with ajv (JSON Schema 2020-12), so a test can
 * check that an emulator answer has the shape the real service documents for that operation and status.
 */

export type ApiDocument = 'data' | 'metrics';

const SPEC_DIR = process.env.AVALAKE_SHARED_DIR
  ? `${process.env.AVALAKE_SHARED_DIR}/reference/openapi`
  : fileURLToPath(new URL('../../../shared/reference/openapi/', import.meta.url));

const DOCUMENT_FILES: Record<ApiDocument, string> = {
  data: 'data-api.glacier.openapi.json',
  metrics: 'metrics-api.popsicle.openapi.json',
};

/** Each document is registered with ajv under this id; `#/components/...` refs resolve inside it. */
const documentId = (doc: ApiDocument) => `https://avalake.test/openapi/${doc}.json`;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export interface Operation {
  document: ApiDocument;
  method: string;
  /** The path template as the document writes it, e.g. `/v1/networks/{network}/rewards`. */
  path: string;
  operationId: string | undefined;
  /** `GET /v1/networks/{network}/rewards`. */
  key: string;
  /** Response statuses that carry an application/json schema. */
  statuses: string[];
}

export interface ValidationResult {
  valid: boolean;
  /** One line per problem: `<json path>: <message> (value: <excerpt>)`. */
  errors: string[];
}

export type ResponseValidator = (body: unknown) => ValidationResult;

type Json = Record<string, unknown>;

let loaded: { docs: Record<ApiDocument, Json>; ajv: Ajv2020 } | undefined;

function load() {
  if (loaded) return loaded;
  // strict: false lets ajv skip what OpenAPI adds to JSON Schema (example, x-*, discriminator, deprecated).
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const docs = {} as Record<ApiDocument, Json>;
  for (const doc of Object.keys(DOCUMENT_FILES) as ApiDocument[]) {
    const raw = JSON.parse(readFileSync(`${SPEC_DIR}/${DOCUMENT_FILES[doc]}`, 'utf8')) as Json;
    docs[doc] = raw;
    ajv.addSchema(translateNullable({ ...raw, $id: documentId(doc) }) as AnySchema);
  }
  loaded = { docs, ajv };
  return loaded;
}

/**
 * Note: a few schemas still carry OpenAPI 3.0's `nullable: true`, which 2020-12 does not know and ajv
 * rejects without a `type`. It is rewritten to what it meant: the schema, or null.
 */
function translateNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(translateNullable);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'nullable') out[k] = translateNullable(v);
  if ((node as Json).nullable === true) return { anyOf: [out, { type: 'null' }] };
  return out;
}

/** Every operation of both documents, e.g. to report which ones the emulator serves. */
export function listOperations(): Operation[] {
  const { docs } = load();
  const out: Operation[] = [];
  for (const document of Object.keys(docs) as ApiDocument[]) {
    const paths = (docs[document].paths ?? {}) as Record<string, Json>;
    for (const [path, item] of Object.entries(paths)) {
      for (const m of HTTP_METHODS) {
        const op = item[m] as Json | undefined;
        if (!op) continue;
        const responses = (op.responses ?? {}) as Record<string, Json>;
        const statuses = Object.keys(responses).filter((s) => jsonSchemaOf(responses[s]) !== undefined);
        const method = m.toUpperCase();
        out.push({
          document,
          method,
          path,
          operationId: op.operationId as string | undefined,
          key: `${method} ${path}`,
          statuses,
        });
      }
    }
  }
  return out;
}

/** Finds an operation by `METHOD /path/{template}`; `document` settles a key both documents define. */
export function findOperation(key: string, document?: ApiDocument): Operation {
  const matches = listOperations().filter((op) => op.key === key && (!document || op.document === document));
  if (matches.length === 1) return matches[0] as Operation;
  if (matches.length === 0)
    throw new Error(`OpenAPI: no operation "${key}"${document ? ` in the ${document} document` : ''}`);
  throw new Error(`OpenAPI: "${key}" is in both documents; pass the document`);
}

/** True when a concrete path (no query) is an instance of the operation's path template. */
export function matchesTemplate(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.split('/');
  return (
    t.length === p.length &&
    t.every((seg, i) => {
      const part = p[i] as string;
      if (!seg.includes('{')) return seg === part;
      // A template segment may mix literal text and parameters, e.g. `{address}` or `tokens:{action}`.
      const pattern = seg.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/:]+');
      return new RegExp(`^${pattern}$`).test(part);
    })
  );
}

const validators = new Map<string, ResponseValidator>();

/**
 * A validator for the JSON body of `operation` (e.g. `GET /v1/networks/{network}/rewards`) answered with
 * `status`. Throws when the document has no JSON schema for that status: the test asked for something
 * the provider never documented.
 */
export function responseValidator(
  operation: string,
  status: number | string,
  document?: ApiDocument,
  variant?: string,
): ResponseValidator {
  const op = findOperation(operation, document);
  const cacheKey = `${op.document} ${op.key} ${status} ${variant ?? ''}`;
  const cached = validators.get(cacheKey);
  if (cached) return cached;

  const { docs, ajv } = load();
  const item = (docs[op.document].paths as Record<string, Json>)[op.path] as Json;
  const responses = ((item[op.method.toLowerCase()] as Json).responses ?? {}) as Record<string, Json>;
  const schema = jsonSchemaOf(responses[String(status)]);
  if (schema === undefined) {
    throw new Error(
      `OpenAPI: ${op.key} documents no application/json body for status ${status}; it documents ${op.statuses.join(', ')}`,
    );
  }
  const pointer = ['paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content']
    .map(escapePointer)
    .join('/');
  const contentType = escapePointer(jsonContentType(responses[String(status)]) as string);
  // The schema is referenced in place so its `#/components/...` refs resolve against its own document.
  const compiled: ValidateFunction = ajv.compile({
    $ref: variant
      ? `${documentId(op.document)}#/components/schemas/${variantOf(op, schema, variant)}`
      : `${documentId(op.document)}#/${pointer}/${contentType}/schema`,
  });
  const validate: ResponseValidator = (body) => {
    const valid = compiled(body) as boolean;
    return { valid, errors: valid ? [] : describeErrors(compiled.errors ?? [], body) };
  };
  validators.set(cacheKey, validate);
  return validate;
}

/**
 * Note: several responses are a `oneOf` of per-chain shapes (P-, X-, C-Chain lists). An empty page
 * satisfies every branch, so `oneOf` rejects it; and a failing answer gets every branch's errors. A case
 * that knows its chain names the branch (`variant`, a component schema name) and is checked against it.
 */
function variantOf(op: Operation, schema: unknown, variant: string): string {
  const union = schema as { oneOf?: Json[]; anyOf?: Json[] };
  const branches = (union.oneOf ?? union.anyOf ?? []).map((b) =>
    String(b.$ref ?? '')
      .split('/')
      .pop(),
  );
  if (!branches.includes(variant))
    throw new Error(`OpenAPI: ${op.key} has no response variant ${variant}; it has ${branches.join(', ')}`);
  return variant;
}

function jsonContentType(response: Json | undefined): string | undefined {
  const content = (response?.content ?? {}) as Record<string, Json>;
  return Object.keys(content).find((type) => type === 'application/json' || type.endsWith('+json'));
}

function jsonSchemaOf(response: Json | undefined): unknown {
  const type = jsonContentType(response);
  if (type === undefined) return undefined;
  const content = response?.content as Record<string, Json>;
  return content[type]?.schema;
}

/** A JSON pointer segment, URI-encoded for use in a `$ref` fragment (`{` and `}` are not URI characters). */
const escapePointer = (segment: string) =>
  encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1')).replace(/%3A/gi, ':');

const MAX_ERRORS = 25;

/**
 * ajv's errors as one readable line each, with the offending value; the noise of oneOf/anyOf branches
 * that "must match a schema" is kept only when nothing more precise explains the failure.
 */
function describeErrors(errors: readonly ErrorObject[], body: unknown): string[] {
  const precise = errors.filter((e) => !['oneOf', 'anyOf', 'if'].includes(e.keyword));
  const chosen = precise.length > 0 ? precise : errors;
  const lines = new Set<string>();
  for (const e of chosen) {
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const detail =
      e.keyword === 'required'
        ? `is missing required property "${(e.params as { missingProperty: string }).missingProperty}"`
        : e.keyword === 'enum'
          ? `must be one of ${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues)}`
          : e.keyword === 'additionalProperties'
            ? `has unexpected property "${(e.params as { additionalProperty: string }).additionalProperty}"`
            : (e.message ?? e.keyword);
    const schemaPath = decodeURIComponent(
      e.schemaPath.replace(/^https:\/\/avalake\.test\/openapi\/\w+\.json/, ''),
    );
    lines.add(
      `${where}: ${detail} (value: ${excerpt(valueAt(body, e.instancePath))}) [schema ${schemaPath}]`,
    );
  }
  const all = [...lines];
  return all.length > MAX_ERRORS
    ? [...all.slice(0, MAX_ERRORS), `… and ${all.length - MAX_ERRORS} more`]
    : all;
}

function valueAt(body: unknown, instancePath: string): unknown {
  let node = body;
  for (const raw of instancePath.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function excerpt(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
