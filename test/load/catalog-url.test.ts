import { describe, expect, it } from 'vitest';
import { isReadableCatalogUrl, redactCatalogUrl } from '../../src/load/catalog-url.ts';

/** The secret in every URL below: it must never be shown. */
const SECRET = 'S3cr3tPw';

describe('redactCatalogUrl', () => {
  it.each([
    // The user-info's password, the rest as typed.
    [`postgres://avalake:${SECRET}@db:5432/lake`, 'postgres://avalake:***@db:5432/lake'],
    [`postgres://u:${SECRET}@[::1]:5432/db`, 'postgres://u:***@[::1]:5432/db'],
    [`postgres://u:${SECRET}@/db?host=/run/postgresql`, 'postgres://u:***@/db?host=/run/postgresql'],
    [`postgres://u:my ${SECRET}@h/db`, 'postgres://u:***@h/db'],
    // A password as a query parameter (node-postgres reads ?password=), in any case, and libpq's sslpassword.
    [
      `postgres://postgres@127.0.0.1:55433/nosuchdb?password=${SECRET}`,
      'postgres://postgres@127.0.0.1:55433/nosuchdb?password=***',
    ],
    [
      `postgres://u@h/db?sslmode=require&PassWord=${SECRET}&application_name=x`,
      'postgres://u@h/db?sslmode=require&PassWord=***&application_name=x',
    ],
    [`postgres://h/db?sslpassword=${SECRET}`, 'postgres://h/db?sslpassword=***'],
    [`postgres://h/db?pass%77ord=${SECRET}`, 'postgres://h/db?pass%77ord=***'],
    [`postgres://h/db?password=ab#${SECRET}&x=1`, 'postgres://h/db?password=***&x=1'],
    [`postgres://u:${SECRET}@h/db?password=${SECRET}`, 'postgres://u:***@h/db?password=***'],
    // Not URLs: everything from the first ':' after '//' to the last '@'.
    [`postgress://postgres:Sec/${SECRET}@127.0.0.1/x`, 'postgress://postgres:***@127.0.0.1/x'],
    [`pg://postgres:Sec:${SECRET}@127.0.0.1/x`, 'pg://postgres:***@127.0.0.1/x'],
    [`postgres://postgres:${SECRET}@127.0.0.1:notaport/db`, 'postgres://postgres:***@127.0.0.1:notaport/db'],
    [`postgres://u:pa?${SECRET}@h/db`, 'postgres://u:***@h/db'],
    [`user:${SECRET}@host`, 'user:***@host'],
    [`pg://h/db&password=${SECRET}`, 'pg://h/db&password=***'],
    // URLs that parse with the password split at an unencoded '/', '#' or '?' (host u, port 12).
    [`postgres://u:12/${SECRET}@h/db`, 'postgres://u:***@h/db'],
    [`postgres://u:12#${SECRET}@h/db`, 'postgres://u:***@h/db'],
    [`postgres://u:12?${SECRET}@h/db`, 'postgres://u:***@h/db'],
  ])('%s', (url, shown) => {
    expect(redactCatalogUrl(url)).toBe(shown);
  });

  it('leaves a URL without a secret as typed', () => {
    for (const url of [
      'postgres://avalake@db.internal/avalake',
      'postgres://[::1]:5432/db',
      'postgres://u@h:5432/db?user=me@corp&sslmode=require',
      'mysql://db/avalake',
      'notaurl',
    ])
      expect(redactCatalogUrl(url)).toBe(url);
  });
});

describe('isReadableCatalogUrl', () => {
  it('is what node-postgres can read: a numeric port, a password without an unencoded / ? #', () => {
    for (const url of [
      'postgres://avalake@db.internal/avalake',
      'postgresql://u:pw@h:5432/db?sslmode=require',
      'postgres://u@/db?host=/run/postgresql',
      'postgres://u:my pw@h/db',
      'postgres://u:a@b@h/db',
    ])
      expect(isReadableCatalogUrl(url), url).toBe(true);
    for (const url of [
      'postgres://postgres:pw@127.0.0.1:notaport/db',
      'postgres://h:99999/db',
      'postgres://postgres:Sec/r3t@127.0.0.1/x',
      'postgres://u:pa?ss@h/db',
    ])
      expect(isReadableCatalogUrl(url), url).toBe(false);
  });
});
