import { z } from 'zod';

/**
 * How a field is stored in the lake when its zod type alone does not say it. Plain zod types map by
 * themselves (string → Utf8, number → Float64, boolean → Bool, array → List, object → Struct); a marked
 * field says what the API's JSON cannot: that a string is an amount, that a number is a timestamp, …
 */
export type LakeKind = 'amount' | 'bigAmount' | 'timestamp' | 'int32' | 'int64' | 'json';

/** The unit a timestamp arrives in. In the lake every timestamp is milliseconds, UTC. */
export type TimeUnitIn = 's' | 'ms';

export interface LakeMeta {
  kind: LakeKind;
  /** Only for `timestamp`. */
  unit?: TimeUnitIn;
}

/**
 * Where the lake kinds live. A registry rather than `.meta()` keeps them out of the global metadata that
 * JSON Schema generation reads; zod 4 registries inherit through `.refine()`/`.describe()` clones.
 */
export const lakeRegistry = z.registry<LakeMeta>();

/** The lake kind of a schema, if it was built by one of the `lake.*` helpers. */
export function lakeMetaOf(schema: z.ZodType): LakeMeta | undefined {
  return lakeRegistry.get(schema);
}

/** Decimal128(38,0) holds at most 38 digits. */
export const DECIMAL_DIGITS = 38;
/** A uint256 has at most 78 decimal digits. */
const UINT256_DIGITS = 78;
const UINT256_MAX = (1n << 256n) - 1n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** The suffix of the exact-string column that a `bigAmount` field gets beside its decimal column. */
export const EXACT_SUFFIX = 'Exact';

function amount(options: { signed?: boolean } = {}) {
  const pattern = options.signed ? /^-?\d{1,38}$/ : /^\d{1,38}$/;
  const what = options.signed ? 'an integer' : 'a non-negative integer';
  return z
    .string()
    .regex(pattern, { message: `expected ${what} of at most ${DECIMAL_DIGITS} digits as a decimal string` })
    .register(lakeRegistry, { kind: 'amount' });
}

function bigAmount() {
  return (
    z
      .string()
      // abort: a string that is not digits never reaches the refinement, whose BigInt() would throw.
      .regex(/^\d{1,78}$/, {
        message: `expected a uint256 as a decimal string of at most ${UINT256_DIGITS} digits`,
        abort: true,
      })
      .refine((s) => s.length < UINT256_DIGITS || BigInt(s) <= UINT256_MAX, { message: 'exceeds uint256' })
      .register(lakeRegistry, { kind: 'bigAmount' })
  );
}

function timestamp(options: { unit?: TimeUnitIn } = {}) {
  // Note: avalanchego's JSON-RPC sends uint64 times as decimal strings; the Data API sends numbers.
  return z
    .union([z.number().int().nonnegative(), z.string().regex(/^\d{1,16}$/)])
    .register(lakeRegistry, { kind: 'timestamp', unit: options.unit ?? 's' });
}

function int64() {
  return z
    .union([
      z.number().int(),
      z
        .string()
        .regex(/^-?\d{1,19}$/, { abort: true })
        .refine((s) => {
          const n = BigInt(s);
          return n >= INT64_MIN && n <= INT64_MAX;
        }, 'outside the int64 range'),
    ])
    .register(lakeRegistry, { kind: 'int64' });
}

function int32() {
  return z
    .number()
    .int()
    .min(-(2 ** 31))
    .max(2 ** 31 - 1)
    .register(lakeRegistry, { kind: 'int32' });
}

/**
 * A free-form value kept as JSON text. Pass a schema to validate its shape anyway; the column stays text.
 * The column is nullable: a missing value is stored as SQL NULL, not as the text `null`.
 */
function json<T extends z.ZodType = z.ZodUnknown>(shape?: T): T {
  // clone() so the caller's schema instance is not marked as JSON everywhere it is used.
  const base = (shape ? shape.clone() : z.unknown()) as T;
  lakeRegistry.add(base, { kind: 'json' });
  return base;
}

/**
 * Field types for record schemas, by what the lake must store:
 * - `amount()`: an integer in the smallest unit, as a decimal string → Decimal128(38,0).
 * - `bigAmount()`: a uint256 decimal string → Decimal128(38,0) column (NULL when it has more than 38 digits)
 *   plus `<name>Exact`, the exact decimal string.
 * - `timestamp({ unit })`: Unix seconds (default) or milliseconds, number or digit string → Timestamp(ms, UTC).
 * - `int64()`: heights, block numbers, as number or string → Int64. `int32()`: small counts → Int32.
 * - `json(shape?)`: a free-form object → JSON text.
 */
export const lake = { amount, bigAmount, timestamp, int64, int32, json } as const;

/** Lineage column names, the same in every stream's files. */
export const RUN_ID = '_run_id';
export const EXTRACTED_AT = '_extracted_at';

/**
 * The columns every row carries besides its record: the run that wrote it, when it was extracted (epoch
 * milliseconds or a Date) and the partition keys' values (strings, the same as the Hive folders).
 */
export function lineageFields(partitionKeys: readonly string[]) {
  const shape: Record<string, z.ZodType> = {
    [RUN_ID]: z.string(),
    [EXTRACTED_AT]: z
      .union([z.number().int().nonnegative(), z.date()])
      .register(lakeRegistry, { kind: 'timestamp', unit: 'ms' }),
  };
  for (const key of partitionKeys) {
    if (key in shape) throw new Error(`partition key ${key} collides with a lineage column`);
    shape[key] = z.string();
  }
  return z.object(shape);
}
