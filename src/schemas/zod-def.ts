import type { z } from 'zod';

/**
 * What avalake reads of a zod schema's definition to compile code from it: the lake's columns
 * (load/columns.ts) and the quick record check (extract/strategies/record-check.ts). These are zod's
 * internals (`_zod.def`, `_zod.optin`), not its documented API, so package.json pins zod's exact version;
 * the tests of both, over every stream's schema, are the first to fail if a release moves them.
 */
export interface ZodDef {
  type: string;
  format?: string;
  checks?: ZodCheck[];
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  entries?: Record<string, unknown>;
  values?: unknown[];
  transform?: (value: unknown) => unknown;
}

/** A check attached to a schema (`.regex()`, `.min()`, `.refine()` and the like). */
export interface ZodCheck {
  _zod: { def: ZodCheckDef };
}

export interface ZodCheckDef {
  check: string;
  format?: string;
  pattern?: RegExp;
  value?: number | bigint;
  inclusive?: boolean;
  minimum?: number;
  maximum?: number;
  length?: number;
  fn?: (value: unknown) => unknown;
}

export const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/** "optional" when the schema accepts a missing key. */
export const optinOf = (schema: z.ZodType): string | undefined =>
  (schema as unknown as { _zod: { optin?: string } })._zod.optin;
