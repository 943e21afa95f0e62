import { lstat, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fsyncDir, mkdirDurable } from './durable.ts';
import { LakeCorruptError } from './errors.ts';
import { listDir } from './file-records.ts';
import type { LakePaths } from './layout.ts';
import type { StreamState } from './state.ts';

/**
 * A stream's folders live in generations, `_generations/<stream>/g<seq>`; `data/lake/<stream>` is a
 * relative link to the current one. A compaction builds the next generation (hard links and merged
 * files), commits, then moves the link with one rename, so a reader globbing the stream sees one
 * generation per folder, never a mix.
 */
export interface Generations {
  /** `data/lake/<stream>` as a link to its current generation, made at the stream's first commit. */
  ensureLink(stream: string): Promise<void>;
  /** Points the stream's link at its state's generation (one rename), then removes every other one. */
  settle(stream: string): Promise<void>;
}

/** `onSettle`: the folders known to exist may have gone with the old generation. */
export function createGenerations(
  paths: LakePaths,
  stateOf: (stream: string) => StreamState,
  onSettle: () => void,
): Generations {
  /** `data/lake/<stream>` as a link to its current generation, made at the stream's first commit. */
  const streamDirs = new Map<string, Promise<void>>();
  const ensureLink = (stream: string): Promise<void> => {
    // Once per stream and run: partitions commit concurrently.
    let made = streamDirs.get(stream);
    if (!made) {
      made = (async () => {
        const link = paths.streamDir(stream);
        if ((await kindOf(link)) !== 'missing') return;
        const generation = paths.generationDir(stream, stateOf(stream).generation);
        await mkdirDurable(generation);
        try {
          await symlink(relative(paths.lakeDir, generation), link);
        } catch (error) {
          // Another writer of a shared catalog made it at the same moment.
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
        await fsyncDir(paths.lakeDir);
      })();
      made.catch(() => streamDirs.delete(stream));
      streamDirs.set(stream, made);
    }
    return made;
  };

  /** Points the stream's link at its state's generation (one rename), then removes every other one. */
  const settle = async (stream: string) => {
    const state = stateOf(stream);
    const link = paths.streamDir(stream);
    const current = paths.generationDir(stream, state.generation);
    const kind = await kindOf(link);
    const legacy = kind === 'directory' && state.generation === 0; // a lake from before generations
    if (legacy || (kind === 'link' && (await readlink(link)) === relative(paths.lakeDir, current))) {
      // Already there; only leftovers of an unfinished compaction to clear.
    } else if (await exists(current)) {
      const tmp = join(paths.generationsDir(stream), `link.tmp-${process.pid}`);
      await rm(tmp, { force: true });
      await symlink(relative(paths.lakeDir, current), tmp);
      if (kind === 'directory') {
        // Note: the one moment a reader can find the stream missing: the first compaction of a lake
        // written before generations existed, when its plain folder gives way to the link.
        await rename(link, join(paths.generationsDir(stream), `legacy-${process.pid}`));
      }
      await rename(tmp, link);
      await fsyncDir(paths.lakeDir);
    } else if (kind === 'missing' && (await listDir(paths.stagingDir(stream))).length > 0) {
      // The stream's first commit is recorded but its files are still staged: its writer was killed
      // before it made the folder, and with a shared catalog they stay staged until that writer's lease
      // runs out (recovery.ts). Make the folder as the writer would have; the files move in when published.
      await ensureLink(stream);
    } else if (kind !== 'missing' || state.files.some((f) => f.table === 'data')) {
      throw new LakeCorruptError(
        `the commit log of ${stream} says its files are in ${relative(paths.lakeDir, current)}, which is ` +
          `missing; if ${paths.dataDir} is not the lake this commit log keeps (a mistyped --data-dir, or the ` +
          'catalog of another lake), name the right one; else restore the data directory from a backup',
        current,
      );
    }
    onSettle();
    streamDirs.delete(stream);
    for (const name of await listDir(paths.generationsDir(stream))) {
      const path = join(paths.generationsDir(stream), name);
      if (path !== current) await rm(path, { recursive: true, force: true });
    }
  };

  return { ensureLink, settle };
}

export async function exists(path: string): Promise<boolean> {
  return (await kindOf(path)) !== 'missing';
}

export async function kindOf(path: string): Promise<'missing' | 'link' | 'directory' | 'file'> {
  try {
    const s = await lstat(path);
    return s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'directory' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}
