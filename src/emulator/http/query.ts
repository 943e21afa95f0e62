import { badRequest } from './errors.ts';

/**
 * Typed, validated access to a request's query string. Every failure is a 400 whose message names the
 * parameter and says what was expected, in the style of the real service (NestJS class-validator).
 */
export interface Query {
  has(name: string): boolean;
  string(name: string): string | undefined;
  /** Integer within [min, max]; `fallback` when absent. */
  int(name: string, range: { min?: number; max?: number }): number | undefined;
  int(name: string, range: { min?: number; max?: number; fallback: number }): number;
  /** One of `values`; `fallback` when absent. */
  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined;
  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T;
  bool(name: string, fallback: boolean): boolean;
  /** A comma-separated list, or the parameter repeated; empty when absent. */
  list(name: string): string[];
  /** The §4.0 pageSize: default 10 (or as given), range 1..max. */
  pageSize(max?: number, fallback?: number): number;
  /** Canonical text of every parameter except the paging ones, to bind page tokens to their query. */
  identity(): string;
}

export function createQuery(search: URLSearchParams): Query {
  const int = (name: string, range: { min?: number; max?: number; fallback?: number }) => {
    const raw = search.get(name);
    if (raw === null || raw === '') return range.fallback;
    if (!/^-?\d+$/.test(raw)) throw badRequest(`${name} must be an integer number, got "${raw}"`);
    const value = Number(raw);
    if (range.min !== undefined && value < range.min)
      throw badRequest(`${name} must not be less than ${range.min}, got ${value}`);
    if (range.max !== undefined && value > range.max)
      throw badRequest(`${name} must not be greater than ${range.max}, got ${value}`);
    return value;
  };
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback?: T) => {
    const raw = search.get(name);
    if (raw === null || raw === '') return fallback;
    if (!values.includes(raw as T))
      throw badRequest(`${name} must be one of the following values: ${values.join(', ')}; got "${raw}"`);
    return raw as T;
  };
  return {
    has: (name) => search.has(name) && search.get(name) !== '',
    string: (name) => {
      const raw = search.get(name);
      return raw === null || raw === '' ? undefined : raw;
    },
    int: int as Query['int'],
    oneOf: oneOf as Query['oneOf'],
    bool(name, fallback) {
      const raw = search.get(name);
      if (raw === null || raw === '') return fallback;
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw badRequest(`${name} must be a boolean value (true or false), got "${raw}"`);
    },
    list: (name) =>
      search
        .getAll(name)
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter((v) => v !== ''),
    pageSize: (max = 100, fallback = 10) => int('pageSize', { min: 1, max, fallback }) as number,
    identity: () =>
      [...search.entries()]
        .filter(([k]) => k !== 'pageToken' && k !== 'pageSize')
        .map(([k, v]) => `${k}=${v}`)
        .sort()
        .join('&'),
  };
}
