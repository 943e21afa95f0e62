import type { Base } from './builder-base.ts';
import { DecimalBuilder } from './builder-scalars.ts';
import { StructBuilder } from './builders.ts';
import type { ColumnSpec } from './columns.ts';

/**
 * Appends one row to a table's column builders: a function compiled for the table's columns, with one
 * line per column that reads the record's field by its name and hands it to that column's builder.
 *
 * Why compile: a loop over the columns reads `record[name]` with a different name each time and calls
 * `write` on builders of every class from one place, so V8 sees those reads and calls as megamorphic and
 * takes its slow path for every value. Written out per column, each read and each call sees one shape of
 * record and one class of builder, and is compiled for it. Structs are written out too (their fields
 * read from the nested object); lists go through their builder.
 *
 * The compiled code does what `Base.append` does for each column, in the same order: NULL or missing is
 * `appendNull` (or RecordTypeError for a required column), anything else is `write` then the validity
 * bit. A throw leaves the row half-appended; the caller truncates every builder back (batch-builder.ts).
 * Field names enter the code only as JSON string literals.
 */
export type RowAppend = (record: object, extra: object) => void;

export function compileRowAppend(
  columns: readonly ColumnSpec[],
  builders: readonly Base[],
  recordColumns: number,
): RowAppend {
  const used: Base[] = [];
  const lines: string[] = [];
  let values = 0;

  const builderName = (builder: Base) => {
    used.push(builder);
    return `b${used.length - 1}`;
  };

  const column = (builder: Base, spec: ColumnSpec, from: string, indent: string) => {
    const b = builderName(builder);
    const v = `v${values++}`;
    lines.push(`${indent}const ${v} = ${from}[${JSON.stringify(spec.source)}];`);
    lines.push(`${indent}if (${v} === null || ${v} === undefined) {`);
    if (!builder.nullable) lines.push(`${indent}  ${b}.required(${v});`);
    lines.push(`${indent}  ${b}.appendNull();`);
    if (builder instanceof DecimalBuilder)
      lines.push(`${indent}} else if (${b}.overflows(${v})) {`, `${indent}  ${b}.appendNull();`);
    lines.push(`${indent}} else {`);
    if (builder instanceof StructBuilder && spec.type.kind === 'struct') {
      lines.push(
        `${indent}  if (typeof ${v} !== 'object' || Array.isArray(${v})) ${b}.fail(${v}, 'expected an object');`,
      );
      spec.type.fields.forEach((field, i) => {
        column(builder.children[i] as Base, field, v, `${indent}  `);
      });
    } else lines.push(`${indent}  ${b}.write(${b}.length, ${v});`);
    lines.push(`${indent}  ${b}.validity.set(${b}.length, true);`, `${indent}  ${b}.length++;`, `${indent}}`);
  };

  columns.forEach((spec, i) => {
    column(builders[i] as Base, spec, i < recordColumns ? 'record' : 'extra', '  ');
  });
  const names = used.map((_, i) => `b${i}`).join(', ');
  const source = `const [${names}] = builders;\nreturn function appendRow(record, extra) {\n${lines.join('\n')}\n};`;
  let factory = factories.get(source);
  if (!factory) {
    factory = new Function('builders', source) as Factory;
    factories.set(source, factory);
  }
  return factory(used);
}

type Factory = (builders: readonly Base[]) => RowAppend;

/**
 * One factory per table layout (its code is its key), for the life of the process. Every flush of a
 * stream gets new builders, and each call of the factory a new closure over them, but all of them run
 * the one function V8 has compiled and optimized already: a new Function per flush was compiled again
 * for each (six times in a 200k-record walk, and once per partition in a pipeline of many).
 */
const factories = new Map<string, Factory>();
