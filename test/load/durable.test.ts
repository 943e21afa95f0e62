import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mkdirDurable } from '../../src/load/durable.ts';

describe('mkdirDurable', () => {
  it('makes every missing folder of a path, and a path already there is fine', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avalake-durable-'));
    const deep = join(dir, 'a', 'b', 'c');
    await mkdirDurable(deep);
    await mkdirDurable(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives up with ENOENT in a folder that exists and takes no new folders, instead of trying forever', async () => {
    // /proc answers ENOENT to mkdir although it exists: node's own recursive mkdir loops on it.
    await expect(mkdirDurable(`/proc/avalake-${process.pid}/data`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
