import type { z } from 'zod';

/**
 * What avalake reads of a zod schema's definition to compile code from it: the lake's columns
 * (load/columns.ts) and the quick record check (schemas/record-check.ts). These are zod's
 * internals (`_zod.def`, `_zod.optin`), not its documented API, so package.json pins zod's exact version;
 * the tests of both, over every stream's schema, are the first to fail if a release moves them.
 */
export interface ZodDef {
  type: string;
  format?: string;
  checks?: ZodCheck[];
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  /** A record's schemas of its keys and values. */
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  /** A tuple's items, and the schema of any elements after them. */
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  options?: z.ZodType[];
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  entries?: Record<string, unknown>;
  values?: unknown[];
  transform?: (value: unknown) => unknown;
  coerce?: boolean;
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

/**
 * How the schema takes a missing object key: "optional" (allowed), "defaulted" (zod fills in a default,
 * also through `.optional()` and unions), or undefined (rejected).
 */
export const optinOf = (schema: z.ZodType): string | undefined =>
  (schema as unknown as { _zod: { optin?: string } })._zod.optin;

/** "optional" when zod may leave the key out of its copy (the schema can hand back undefined). */
export const optoutOf = (schema: z.ZodType): string | undefined =>
  (schema as unknown as { _zod: { optout?: string } })._zod.optout;

/** `.exactOptional()`: its def says "optional", but it passes undefined on to its inner schema. */
export const isExactOptional = (schema: z.ZodType): boolean =>
  (schema as unknown as { _zod: { traits: Set<string> } })._zod.traits.has('$ZodExactOptional');

/** Transforms' functions that hand back the same value for the same input and use nothing else. */
const pureTransforms = new WeakSet<(value: never) => unknown>([String, Number]);

/**
 * Marks a transform's function as pure: its output depends on its input alone (not on zod's context, not
 * on the time, no state kept), so the quick record check (schemas/record-check.ts) may call it
 * itself, as zod would, rather than hand the record to zod.
 */
export function pureTransform<T extends (value: never) => unknown>(fn: T): T {
  pureTransforms.add(fn);
  return fn;
}

export const isPureTransform = (fn: (value: never) => unknown): boolean => pureTransforms.has(fn);
