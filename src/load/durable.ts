import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The fsync discipline the commit protocol rests on: a file's bytes are durable after fsync(file), its
 * name after fsync(directory). Every write that must survive power loss goes through here.
 */

/**
 * Creates `path` (it must not exist), writes `bytes` and fsyncs the file. A write that fails (a full
 * device) removes the file it created: what is left is never a part of a file, and a run on a full disk
 * every 15 minutes leaves nothing behind for each attempt.
 */
export async function writeDurable(path: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    // What stopped the write is the error to see, not a failure to tidy after it.
    await rm(path, { force: true }).catch(() => undefined);
    throw error;
  }
  await handle.close();
}

/** Makes a directory's entries (creates, renames, deletes) durable. */
export async function fsyncDir(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a file's bytes durable when another library wrote it (DuckDB's COPY, a database file): the same call. */
export const fsyncFile = fsyncDir;

/** Replaces `path` atomically: tmp + fsync + rename + fsync(dir). Readers see the old or the new file. */
export async function replaceDurable(path: string, bytes: Uint8Array): Promise<void> {
  // A name of this call's own: a process killed between write and rename leaves its tmp behind, and
  // the next one given the same pid (a container's avalake is often pid 1 or 7) must not trip on it;
  // nor must two workers of one process replacing one file.
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeDurable(tmp, bytes);
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await fsyncDir(dirname(path));
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** sha256 of a file, streamed so a large file does not sit in memory. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(path, 'r');
  try {
    for await (const chunk of handle.createReadStream()) hash.update(chunk as Buffer);
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

/** mkdir -p whose new entries survive power loss: each created folder's parent is fsynced. */
export async function mkdirDurable(path: string, known?: Set<string>): Promise<void> {
  if (known?.has(path)) return;
  try {
    await mkdirOne(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // Its parent is missing: make the parent, then try this folder once more. A second ENOENT (a parent
    // that exists but cannot hold folders, as /proc) is the answer, not a reason to try again forever.
    await mkdirDurable(dirname(path), known);
    await mkdirOne(path);
  }
  known?.add(path);
}

/** One folder, its parent fsynced when it is new; one already there is fine. */
async function mkdirOne(path: string): Promise<void> {
  try {
    await mkdir(path);
    await fsyncDir(dirname(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
