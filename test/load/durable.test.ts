import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mkdirDurable, replaceDurable } from '../../src/load/durable.ts';

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

describe('replaceDurable', () => {
  it('is not stopped by the tmp file a killed process of the same pid left, nor by a second writer of the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avalake-durable-'));
    const path = join(dir, '_catalog');
    // What an avalake of this pid left when killed between its write and its rename (an older name).
    writeFileSync(`${path}.tmp-${process.pid}`, 'half');
    await Promise.all(['one', 'two'].map((text) => replaceDurable(path, new TextEncoder().encode(text))));
    expect(['one', 'two']).toContain(readFileSync(path, 'utf8'));
    // Only the killed one's is left over; this process's own are gone.
    expect(readdirSync(dir).sort()).toEqual(['_catalog', `_catalog.tmp-${process.pid}`]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves no tmp file behind when the replace fails', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avalake-durable-'));
    // A folder where the file should be: the rename over it fails.
    mkdirSync(join(dir, 'state.json', 'inside'), { recursive: true });
    await expect(replaceDurable(join(dir, 'state.json'), new TextEncoder().encode('{}'))).rejects.toThrow();
    expect(readdirSync(dir)).toEqual(['state.json']);
    rmSync(dir, { recursive: true, force: true });
  });
});
