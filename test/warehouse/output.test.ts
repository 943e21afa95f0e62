import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unwritable } from '../../src/cli/data-dir.ts';
import { parseMaxAge } from '../../src/warehouse/freshness.ts';
import { checkOutput, outputError, writeOutput } from '../../src/warehouse/output.ts';
import { WarehouseUsageError } from '../../src/warehouse/usage-error.ts';

/**
 * How a path that cannot be written is reported. A read-only file system cannot be made in a test (root
 * writes through chmod, and a read-only mount needs `mount`), so the errno codes it gives are mapped here
 * directly; what a test can make (a file where a folder is expected) is written for real.
 */

const errno = (code: string, path = '/data/out/.e.parquet.exporting-19090') =>
  Object.assign(new Error(`${code}: some failure, open '${path}'`), { code, path });

const dir = mkdtempSync(join(tmpdir(), 'avalake-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('outputError', () => {
  it.each([
    ['EROFS', /the file system is read-only \(EROFS\)/],
    ['EACCES', /permission denied \(EACCES\)/],
    ['ENOTDIR', /part of the path is a file, not a folder \(ENOTDIR\)/],
    ['EISDIR', /it is a folder \(EISDIR\)/],
  ])('%s: a usage error naming --out and its path, not the temporary file', (code, reason) => {
    const error = outputError('--out', '/data/out/e.parquet', errno(code));
    expect(error).toBeInstanceOf(WarehouseUsageError);
    expect(error.message).toMatch(/^--out \/data\/out\/e\.parquet: cannot write it: /);
    expect(error.message).toMatch(reason);
    expect(error.message).toMatch(/choose another --out$/);
    expect(error.message).not.toContain('exporting');
    expect(error.cause).toBeDefined();
  });

  it('a full disk is a failure (exit 1), not the caller’s mistake', () => {
    const error = outputError('--out', 'r.html', errno('ENOSPC'));
    expect(error).not.toBeInstanceOf(WarehouseUsageError);
    expect(error.message).toBe('--out r.html: cannot write it: no space left on the device (ENOSPC)');
  });
});

describe('a data directory build or compact cannot write in', () => {
  it.each(['EROFS', 'EACCES', 'EPERM'])('%s names the flag, not the lock file', (code) => {
    const message = unwritable(
      '--data-dir',
      '/srv/data',
      errno(code, '/srv/data/warehouse.duckdb.lock.24798.fd83'),
    );
    expect(message).toMatch(
      /^--data-dir \/srv\/data: cannot write in it: .*; choose another --data-dir or make it writable$/,
    );
    expect(message).not.toContain('lock');
  });

  it('other errors are left to the caller', () => {
    expect(unwritable('--data-dir', '/srv/data', errno('ENOENT'))).toBeUndefined();
    expect(unwritable('--data-dir', '/srv/data', new Error('IO Error: something'))).toBeUndefined();
  });
});

describe('checkOutput and writeOutput', () => {
  it('refuses a path under a file before any work', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    await expect(checkOutput('--out', join(file, 'sub', 'r.html'), { createFolders: true })).rejects.toThrow(
      /a-file is a file, not a folder; choose another --out/,
    );
  });

  it('makes missing folders and leaves no temporary file', async () => {
    const out = join(dir, 'a', 'b', 'r.html');
    await checkOutput('--out', out, { createFolders: true });
    expect(await writeOutput('--out', out, '<html>')).toBe(out);
    expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['r.html']);
  });

  it('a folder the file system will not make ends at once, naming it', async () => {
    await expect(writeOutput('--out', '/proc/avalake-nope/r.html', 'x')).rejects.toThrow(
      /^--out \/proc\/avalake-nope\/r\.html: cannot create the folder \/proc\/avalake-nope: /,
    );
  });
});

describe('parseMaxAge with the known streams', () => {
  const streams = ['metrics', 'rewards'];
  it('refuses a misspelt stream, listing the known ones', () => {
    expect(() => parseMaxAge(['rewardz=2d'], streams)).toThrow(
      /--max-age rewardz=2d: no stream is named "rewardz"; streams: metrics, rewards/,
    );
  });
  it('takes a known one', () => {
    expect(parseMaxAge(['12h', 'rewards=2d'], streams)).toEqual({
      defaultSeconds: 43_200,
      byStream: { rewards: 172_800 },
    });
  });
});
