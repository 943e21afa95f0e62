import type { z } from 'zod';
import { lakeMetaOf } from '../../schemas/lake.ts';
import { defOf, optinOf, type ZodDef } from '../../schemas/zod-def.ts';

/**
 * A quick check of a record against a stream's zod schema, compiled once per schema, that answers "zod
 * would accept this record and hand back the same values": the record can then be used as it came,
 * without zod building a copy of it. Anything else (a record zod would reject, or one whose values zod
 * would change: a transform, a default filled in) is left to zod, which says what is wrong or makes the
 * copy. Most records are valid and untouched, so most records skip zod, and the garbage of its copies.
 *
 * What the check reads is what zod reads: the same type tests, the same formats, bounds and patterns
 * (the schema's own RegExp objects), the same refinement functions. Unknown keys are not looked at;
 * the lake's builders read the schema's keys only. A free-form JSON field (`lake.json`) is kept as text
 * of the value as given, so an object inside one is left to zod, which would drop its unknown keys.
 * test/extract/record-check.test.ts holds the check to zod on every stream's records and their mutants.
 */
export type RecordCheck = (record: unknown) => boolean;

/** What a compiled node says of a value. */
const REJECT = 0;
const SAME = 1;
/** Zod may accept it but would hand back something else (or the check cannot tell): ask zod. */
const ASK = 2;

/** Node types whose check rejects undefined by itself: a missing key needs no test of its own. */
const REJECTS_UNDEFINED = new Set(['string', 'number', 'boolean', 'enum', 'object', 'array']);

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
 * enum sets, refinement functions) are passed in as constants, never written into the code.
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
    const body = bodyOf(defOf(s), inJson || isJson(s));
    functions[index] = `function n${index}(v) {\n${body}\n}`;
    return `n${index}`;
  };

  const checksOf = (def: ZodDef, subject: 'number' | 'string' | 'array'): string[] | undefined => {
    const lines: string[] = [];
    for (const check of def.checks ?? []) {
      const c = check._zod.def;
      switch (c.check) {
        case 'string_format':
          if (c.format !== 'regex' || !c.pattern) return undefined;
          {
            const pattern = constant(c.pattern);
            lines.push(`${pattern}.lastIndex = 0; if (!${pattern}.test(v)) return ${REJECT};`);
          }
          break;
        case 'number_format':
          if (c.format !== 'safeint') return undefined;
          lines.push(`if (!Number.isSafeInteger(v)) return ${REJECT};`);
          break;
        case 'greater_than':
          if (subject !== 'number' || typeof c.value !== 'number') return undefined;
          lines.push(`if (!(v ${c.inclusive ? '>=' : '>'} ${c.value})) return ${REJECT};`);
          break;
        case 'less_than':
          if (subject !== 'number' || typeof c.value !== 'number') return undefined;
          lines.push(`if (!(v ${c.inclusive ? '<=' : '<'} ${c.value})) return ${REJECT};`);
          break;
        case 'min_length':
          if (subject === 'number' || typeof c.minimum !== 'number') return undefined;
          lines.push(`if (v.length < ${c.minimum}) return ${REJECT};`);
          break;
        case 'max_length':
          if (subject === 'number' || typeof c.maximum !== 'number') return undefined;
          lines.push(`if (v.length > ${c.maximum}) return ${REJECT};`);
          break;
        case 'length_equals':
          if (subject === 'number' || typeof c.length !== 'number') return undefined;
          lines.push(`if (v.length !== ${c.length}) return ${REJECT};`);
          break;
        case 'custom':
          if (typeof c.fn !== 'function') return undefined;
          // A refinement that throws is zod's to report.
          lines.push(`try { if (!${constant(c.fn)}(v)) return ${REJECT}; } catch { return ${ASK}; }`);
          break;
        default:
          return undefined;
      }
    }
    return lines;
  };

  const bodyOf = (def: ZodDef, inJson: boolean): string => {
    const ask = `return ${ASK};`;
    switch (def.type) {
      case 'string': {
        const checks = checksOf(def, 'string');
        if (!checks) return ask;
        return [`if (typeof v !== 'string') return ${REJECT};`, ...checks, `return ${SAME};`].join('\n');
      }
      case 'number': {
        const checks = checksOf(def, 'number');
        if (!checks || (def.format !== undefined && def.format !== 'safeint')) return ask;
        const integer = def.format === 'safeint' ? `if (!Number.isSafeInteger(v)) return ${REJECT};` : '';
        return [
          `if (typeof v !== 'number' || !Number.isFinite(v)) return ${REJECT};`,
          integer,
          ...checks,
          `return ${SAME};`,
        ].join('\n');
      }
      case 'boolean':
        return `return typeof v === 'boolean' ? ${SAME} : ${REJECT};`;
      case 'unknown':
      case 'any':
        return `return ${SAME};`;
      case 'enum':
        return `return ${constant(new Set(Object.values(def.entries ?? {})))}.has(v) ? ${SAME} : ${REJECT};`;
      case 'literal':
        return `return ${constant(new Set(def.values ?? []))}.has(v) ? ${SAME} : ${REJECT};`;
      case 'optional':
        return `if (v === undefined) return ${SAME};\nreturn ${node(def.innerType as z.ZodType, inJson)}(v);`;
      case 'nullable':
        return `if (v === null) return ${SAME};\nreturn ${node(def.innerType as z.ZodType, inJson)}(v);`;
      case 'default':
      case 'prefault':
        // Zod fills in the default for undefined: a different value.
        return `if (v === undefined) return ${ASK};\nreturn ${node(def.innerType as z.ZodType, inJson)}(v);`;
      case 'pipe': {
        // The output of `in` goes to `out`; when `in` hands back the value itself, `out` checks it too.
        const first = node(def.in as z.ZodType, inJson);
        const second = node(def.out as z.ZodType, inJson);
        return `const r = ${first}(v);\nreturn r === ${SAME} ? ${second}(v) : r;`;
      }
      case 'union': {
        // Zod takes the first option that accepts: an option that cannot tell decides for zod.
        const options = (def.options ?? []).map((o) => node(o, inJson));
        return [
          ...options.map((o) => `{ const r = ${o}(v); if (r !== ${REJECT}) return r; }`),
          `return ${REJECT};`,
        ].join('\n');
      }
      case 'array': {
        const checks = checksOf(def, 'array');
        if (!checks) return ask;
        const element = node(def.element as z.ZodType, inJson);
        return [
          `if (!Array.isArray(v)) return ${REJECT};`,
          ...checks,
          'let all = 1;',
          `for (let i = 0; i < v.length; i++) { const r = ${element}(v[i]); if (r === ${REJECT}) return ${REJECT}; if (r === ${ASK}) all = ${ASK}; }`,
          'return all;',
        ].join('\n');
      }
      case 'object': {
        if ((def.checks ?? []).length > 0) return ask;
        const lines = [`if (typeof v !== 'object' || v === null || Array.isArray(v)) return ${REJECT};`];
        // Inside a JSON field the value is stored as given, and zod's copy drops unknown keys.
        if (inJson) lines.push(`return ${ASK};`);
        else {
          lines.push('let all = 1;');
          for (const [key, field] of Object.entries(def.shape ?? {})) {
            const name = JSON.stringify(key);
            // Zod requires a key to be present unless its schema is optional (optional, default): a
            // schema that takes undefined as a value (unknown, any) still rejects the key missing.
            if (!REJECTS_UNDEFINED.has(defOf(field).type) && optinOf(field) !== 'optional')
              lines.push(`if (!(${name} in v)) return ${REJECT};`);
            lines.push(
              `{ const r = ${node(field, inJson)}(v[${name}]); if (r === ${REJECT}) return ${REJECT}; if (r === ${ASK}) all = ${ASK}; }`,
            );
          }
          // Zod's copy drops a key the shape does not name: the record as it came is not that copy (a
          // version hash of it would differ, and change with a field avalake does not keep).
          const known = constant(new Set(Object.keys(def.shape ?? {})));
          lines.push(`for (const key in v) if (!${known}.has(key)) return ${ASK};`, 'return all;');
        }
        return lines.join('\n');
      }
      case 'transform':
        // String of a string and Number of a number hand back the value itself; any other transform,
        // or these of another type, makes a new value.
        if (def.transform === String) return `return typeof v === 'string' ? ${SAME} : ${ASK};`;
        if (def.transform === Number) return `return typeof v === 'number' ? ${SAME} : ${ASK};`;
        return ask;
      default:
        // date, record, catch, …: zod's to do.
        return ask;
    }
  };

  const root = node(schema, false);
  const names = constants.map((_, i) => `k${i}`).join(', ');
  const source = `const [${names}] = constants;\n${functions.join('\n')}\nreturn (record) => ${root}(record) === ${SAME};`;
  return new Function('constants', source)(constants) as RecordCheck;
}
