import type { z } from 'zod';
import { lakeMetaOf } from './lake.ts';
import { defOf, isExactOptional, isPureTransform, optinOf, optoutOf, type ZodCheck } from './zod-def.ts';

/**
 * A quick check of a record against a zod schema (a stream's, or the commit log's states and records),
 * compiled once per schema, that answers "zod would accept this record, and here are the values it would
 * hand back": the record is then used itself, without zod building a copy of it. A field zod converts in
 * a way the check can do too (a number sent as a string, an amount sent as a number, JSON text parsed by
 * a pure function; see `pureTransform`) is converted in place, and only once the whole record has
 * passed, so a record the check does not pass is left exactly as it came. Anything else (a record zod
 * would reject, a default filled in, a conversion the check cannot do) is left to zod, which says what
 * is wrong or makes the copy. Most records pass, so most records skip zod, and the garbage of its copies.
 *
 * What the check reads is what zod reads: the same type tests, coercions, formats, bounds and patterns
 * (the schema's own RegExp objects), the same refinement and transform functions. An object with a key
 * its schema does not name is left to zod, whose copy drops the key. A free-form JSON field
 * (`lake.json`) is kept as text of the value as given, so an object inside one is left to zod too.
 * test/schemas/record-check.test.ts holds the check to zod on every stream's records and their mutants,
 * test/load/stored-check.test.ts on the commit log's.
 */
export type RecordCheck = (record: unknown) => boolean;

/*
 * A compiled node hands back the value zod would hand back for its input (the input itself when zod
 * leaves it as it is), or one of these two, named REJECT and ASK in the generated code too.
 */
/** Zod rejects the value: a union tries its next option. */
const REJECT = Symbol('reject');
/** Zod may accept it, but the check cannot tell, or cannot make zod's value: ask zod. */
const ASK = Symbol('ask');

/** Node types whose check rejects undefined by itself: a missing key needs no test of its own. */
const REJECTS_UNDEFINED = new Set(['string', 'number', 'boolean', 'enum', 'object', 'array']);

/** Node types whose compiled code runs their schema's checks (`.refine()` and the like). */
const RUNS_CHECKS = new Set(['string', 'number', 'array']);

/**
 * Whether an object or array is reachable twice from `record` (through two keys, or a cycle). Zod's copy
 * holds a copy of it for each place, each converted by that place's schema, while a write in place
 * would show in every place. Walks the keys `for…in` lists (all of a record JSON.parse made); called
 * only for a record with writes, so a record with none allocates nothing here.
 */
function reachesTwice(record: unknown): boolean {
  const seen = new Set<object>();
  const stack: unknown[] = [record];
  try {
    while (stack.length > 0) {
      const value = stack.pop();
      if (typeof value !== 'object' || value === null) continue;
      if (seen.has(value)) return true;
      seen.add(value);
      if (Array.isArray(value)) for (const item of value) stack.push(item);
      else for (const key in value) stack.push((value as Record<string, unknown>)[key]);
    }
  } catch {
    // A getter that throws (in a field zod keeps as it is): zod's to read.
    return true;
  }
  return false;
}

const compiled = new WeakMap<z.ZodType, RecordCheck>();

/** A free-form JSON field (`lake.json`): kept as the text of the value as given (see above). */
const isJson = (schema: z.ZodType) => lakeMetaOf(schema)?.kind === 'json';

/** The quick check of `schema`, compiled on first use. */
export function recordCheckOf(schema: z.ZodType): RecordCheck {
  let check = compiled.get(schema);
  if (!check) {
    check = compileRecordCheck(schema);
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Compiles one function per schema node into one body, so that each field read is a named property
 * read at its own site (one record shape each, as in row-append.ts). Values from the schema (patterns,
 * enum sets, refinement and transform functions) are passed in as constants, never written into the
 * code. A field whose value zod would change is not written at once but noted in `writes` (object or
 * array, key, value): a union whose option fails drops the notes that option made, and the record takes
 * them all only once it has passed whole, and only if no object in it is reached twice (see
 * `reachesTwice`).
 */
function compileRecordCheck(schema: z.ZodType): RecordCheck {
  const constants: unknown[] = [];
  const functions: string[] = [];
  const constant = (value: unknown) => {
    constants.push(value);
    return `k${constants.length - 1}`;
  };

  /** Emits the function of a node and returns its name. */
  const node = (s: z.ZodType, inJson: boolean): string => {
    const index = functions.push('') - 1;
    const body = bodyOf(s, inJson || isJson(s));
    functions[index] = `function n${index}(v) {\n${body}\n}`;
    return `n${index}`;
  };

  /**
   * A field or element: its node's value, noted as a write when it is not the value read. `skipMissing`:
   * a missing key is not checked at all (`in` is tested only for undefined: a value read costs nothing).
   */
  const child = (fn: string, container: string, key: string, skipMissing = false) =>
    `{ const x = ${container}[${key}]; ` +
    (skipMissing ? `if (x !== undefined || ${key} in ${container}) { ` : '{ ') +
    `const r = ${fn}(x); if (r === REJECT) return REJECT; ` +
    `if (r === ASK) all = ASK; else if (r !== x) writes.push(${container}, ${key}, r); } }`;

  const checksOf = (checks: ZodCheck[], subject: 'number' | 'string' | 'array'): string[] | undefined => {
    const lines: string[] = [];
    for (const check of checks) {
      const c = check._zod.def;
      switch (c.check) {
        case 'string_format':
          if (c.format !== 'regex' || !c.pattern) return undefined;
          {
            const pattern = constant(c.pattern);
            lines.push(`${pattern}.lastIndex = 0; if (!${pattern}.test(v)) return REJECT;`);
          }
          break;
        case 'number_format':
          if (c.format !== 'safeint') return undefined;
          lines.push('if (!Number.isSafeInteger(v)) return REJECT;');
          break;
        case 'greater_than':
          if (subject !== 'number' || typeof c.value !== 'number') return undefined;
          lines.push(`if (!(v ${c.inclusive ? '>=' : '>'} ${c.value})) return REJECT;`);
          break;
        case 'less_than':
          if (subject !== 'number' || typeof c.value !== 'number') return undefined;
          lines.push(`if (!(v ${c.inclusive ? '<=' : '<'} ${c.value})) return REJECT;`);
          break;
        case 'min_length':
          if (subject === 'number' || typeof c.minimum !== 'number') return undefined;
          lines.push(`if (v.length < ${c.minimum}) return REJECT;`);
          break;
        case 'max_length':
          if (subject === 'number' || typeof c.maximum !== 'number') return undefined;
          lines.push(`if (v.length > ${c.maximum}) return REJECT;`);
          break;
        case 'length_equals':
          if (subject === 'number' || typeof c.length !== 'number') return undefined;
          lines.push(`if (v.length !== ${c.length}) return REJECT;`);
          break;
        case 'custom':
          if (typeof c.fn !== 'function') return undefined;
          // A refinement that throws is zod's to report.
          lines.push(`try { if (!${constant(c.fn)}(v)) return REJECT; } catch { return ASK; }`);
          break;
        default:
          return undefined;
      }
    }
    return lines;
  };

  const bodyOf = (s: z.ZodType, inJson: boolean): string => {
    const def = defOf(s);
    const ask = 'return ASK;';
    // Zod runs a schema's checks on the value it hands back, whatever the schema (`.refine()` on an enum,
    // an optional, a union, …): a node that does not run them leaves them to zod.
    if ((def.checks ?? []).length > 0 && !RUNS_CHECKS.has(def.type)) return ask;
    switch (def.type) {
      case 'string': {
        const checks = checksOf(def.checks ?? [], 'string');
        if (!checks || def.coerce) return ask;
        return ["if (typeof v !== 'string') return REJECT;", ...checks, 'return v;'].join('\n');
      }
      case 'number': {
        const checks = checksOf(def.checks ?? [], 'number');
        if (!checks || (def.format !== undefined && def.format !== 'safeint')) return ask;
        return [
          // z.coerce.number() reads any value as Number() does; zod keeps the value if that throws.
          def.coerce ? 'try { v = Number(v); } catch {}' : '',
          "if (typeof v !== 'number' || !Number.isFinite(v)) return REJECT;",
          def.format === 'safeint' ? 'if (!Number.isSafeInteger(v)) return REJECT;' : '',
          ...checks,
          'return v;',
        ].join('\n');
      }
      case 'boolean':
        return def.coerce ? ask : "return typeof v === 'boolean' ? v : REJECT;";
      case 'unknown':
      case 'any':
        return 'return v;';
      case 'enum':
        return `return ${constant(new Set(Object.values(def.entries ?? {})))}.has(v) ? v : REJECT;`;
      case 'literal':
        return `return ${constant(new Set(def.values ?? []))}.has(v) ? v : REJECT;`;
      case 'optional': {
        const inner = def.innerType as z.ZodType;
        // `.exactOptional()` hands undefined to its inner schema (a missing key is the object's to allow),
        // and `.optional()` does too when the inner schema has a default: that default is zod's to fill in.
        if (isExactOptional(s)) return `return ${node(inner, inJson)}(v);`;
        const empty = optinOf(inner) === 'defaulted' ? 'ASK' : 'v';
        return `if (v === undefined) return ${empty};\nreturn ${node(inner, inJson)}(v);`;
      }
      case 'nullable':
        return `if (v === null) return v;\nreturn ${node(def.innerType as z.ZodType, inJson)}(v);`;
      case 'default':
        // Zod hands back the default for undefined, whether it came in (a key the record does not have)
        // or came out of the inner schema (a transform that makes undefined): zod's to fill in.
        return [
          'if (v === undefined) return ASK;',
          `const r = ${node(def.innerType as z.ZodType, inJson)}(v);`,
          'return r === undefined ? ASK : r;',
        ].join('\n');
      case 'prefault':
        // Zod runs the inner schema on the default for undefined in; what comes out is kept, undefined too.
        return `if (v === undefined) return ASK;\nreturn ${node(def.innerType as z.ZodType, inJson)}(v);`;
      case 'pipe': {
        // What `in` hands back goes to `out`. A value with writes still waiting inside it (an object
        // whose field converts) is not yet what `out` would be given: zod's to do.
        const first = node(def.in as z.ZodType, inJson);
        const second = node(def.out as z.ZodType, inJson);
        return [
          'const mark = writes.length;',
          `const r = ${first}(v);`,
          'if (r === REJECT || r === ASK) return r;',
          `return writes.length === mark ? ${second}(r) : ASK;`,
        ].join('\n');
      }
      case 'union': {
        // Zod takes the first option that accepts: an option that cannot tell decides for zod. An
        // option that rejects takes back the writes it noted.
        const options = (def.options ?? []).map((o) => node(o, inJson));
        return [
          'const mark = writes.length;',
          ...options.map((o) => `{ const r = ${o}(v); if (r !== REJECT) return r; writes.length = mark; }`),
          'return REJECT;',
        ].join('\n');
      }
      case 'array': {
        // Zod checks the array it hands back. A length is the same before and after the elements convert,
        // but a refinement sees the converted elements: it runs last, on an array none of whose elements
        // changes, and asks zod otherwise.
        const isRefinement = (c: ZodCheck) => c._zod.def.check === 'custom';
        const lengths = checksOf(
          (def.checks ?? []).filter((c) => !isRefinement(c)),
          'array',
        );
        const refinements = checksOf((def.checks ?? []).filter(isRefinement), 'array');
        if (!lengths || !refinements) return ask;
        const element = node(def.element as z.ZodType, inJson);
        const refined = refinements.length > 0;
        return [
          'if (!Array.isArray(v)) return REJECT;',
          ...lengths,
          refined ? 'const mark = writes.length;' : '',
          'let all = v;',
          `for (let i = 0; i < v.length; i++) ${child(element, 'v', 'i')}`,
          ...(refined ? ['if (all === ASK || writes.length !== mark) return ASK;', ...refinements] : []),
          'return all;',
        ].join('\n');
      }
      case 'object': {
        const lines = ["if (typeof v !== 'object' || v === null || Array.isArray(v)) return REJECT;"];
        // Inside a JSON field the value is stored as given, and zod's copy drops unknown keys.
        if (inJson) lines.push('return ASK;');
        else {
          lines.push('let all = v;');
          for (const [key, field] of Object.entries(def.shape ?? {})) {
            const name = JSON.stringify(key);
            const fn = node(field, inJson);
            const read = child(fn, 'v', name);
            const optin = optinOf(field);
            if (optin === undefined) {
              // A missing key is rejected even by a schema that takes undefined as a value (unknown, any).
              if (!REJECTS_UNDEFINED.has(defOf(field).type))
                lines.push(`if (!(${name} in v)) return REJECT;`);
              lines.push(read);
            } else if (optin === 'defaulted') {
              // Zod fills in a default for a missing key (`.default()`, also inside `.optional()` or a union):
              // zod's to do, though a later field may still tell that zod rejects the object.
              lines.push(`if (!(${name} in v)) all = ASK; else ${read}`);
            } else if (optoutOf(field) === 'optional') {
              // Zod leaves a missing optional key out of its copy, whatever its schema makes of undefined.
              lines.push(child(fn, 'v', name, true));
            } else {
              // Optional in but not out (`.optional().transform(f)`): zod's copy takes what the schema makes
              // of a missing key unless that is undefined, as a write does.
              lines.push(read);
            }
          }
          // Zod's copy drops a key the shape does not name: the record as it came is not that copy (a
          // version hash of it would differ, and change with a field avalake does not keep).
          const known = constant(new Set(Object.keys(def.shape ?? {})));
          lines.push(`for (const key in v) if (!${known}.has(key)) return ASK;`, 'return all;');
        }
        return lines.join('\n');
      }
      case 'record': {
        // A record with string keys: zod's copy holds the same keys, each with its value's value. Zod
        // takes a plain object only (its test, simplified: an object of another kind is zod's to judge),
        // and leaves out a key `__proto__` and counts symbol keys: zod's to do as well.
        const key = defOf(def.keyType as z.ZodType);
        if (key.type !== 'string' || key.coerce || (key.checks ?? []).length > 0) return ask;
        const value = node(def.valueType as z.ZodType, inJson);
        return [
          "if (typeof v !== 'object' || v === null || Array.isArray(v)) return REJECT;",
          'const proto = Object.getPrototypeOf(v);',
          'if (proto !== Object.prototype && proto !== null) return ASK;',
          'if (Object.getOwnPropertySymbols(v).length > 0) return ASK;',
          'let all = v;',
          `for (const key in v) { if (key === '__proto__') return ASK; ${child(value, 'v', 'key')} }`,
          'return all;',
        ].join('\n');
      }
      case 'tuple': {
        // Fixed items only: an optional item or a rest makes the lengths zod takes a range.
        const items = def.items ?? [];
        if (def.rest || items.some((item) => optinOf(item) !== undefined)) return ask;
        return [
          `if (!Array.isArray(v) || v.length !== ${items.length}) return REJECT;`,
          'let all = v;',
          ...items.map((item, i) => child(node(item, inJson), 'v', String(i))),
          'return all;',
        ].join('\n');
      }
      case 'transform':
        // A function known to be pure is called as zod would call it; one that throws is zod's to report.
        if (def.transform && isPureTransform(def.transform))
          return `try { return ${constant(def.transform)}(v); } catch { return ASK; }`;
        return ask;
      default:
        // date, record, catch, …: zod's to do.
        return ask;
    }
  };

  const root = node(schema, false);
  const names = constants.map((_, i) => `k${i}`).join(', ');
  const source = [
    `const [REJECT, ASK, reachesTwice, ${names}] = constants;`,
    'const writes = [];',
    ...functions,
    'return (record) => {',
    // finally: a record that throws half-way (a getter, a stack too deep) leaves no writes to the next.
    '  try {',
    `    if (${root}(record) !== record) return false;`,
    '    if (writes.length === 0) return true;',
    '    if (reachesTwice(record)) return false;',
    '    for (let i = 0; i < writes.length; i += 3) writes[i][writes[i + 1]] = writes[i + 2];',
    '    return true;',
    '  } finally {',
    '    writes.length = 0;',
    '  }',
    '};',
  ].join('\n');
  return new Function('constants', source)([REJECT, ASK, reachesTwice, ...constants]) as RecordCheck;
}
