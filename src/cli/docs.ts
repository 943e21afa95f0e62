import { readFile } from 'node:fs/promises';
import { DICTIONARY_PATH, generateDictionary } from '../warehouse/dictionary.ts';
import { checkOutput, errnoReason, writeOutput } from '../warehouse/output.ts';
import { WarehouseUsageError } from '../warehouse/usage-error.ts';
import { warehouseDirOf } from './data-dir.ts';
import { EXIT } from './exit.js';
import { reportWarehouseError } from './sql.ts';

interface DocsArgs {
  dataDir?: string;
  models?: string;
  out?: string;
  check?: boolean;
}

/** The whole command, returning its exit code: `--check` is 1 when the file differs from the models. */
export async function docs(
  args: DocsArgs,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const out = args.out ?? DICTIONARY_PATH;
  try {
    if (!args.check) await checkOutput('--out', out, { createFolders: true });
    const dictionary = await generateDictionary({
      dataDir: warehouseDirOf(args.dataDir, env),
      ...(args.models !== undefined ? { modelsDir: args.models } : {}),
    });
    for (const problem of dictionary.problems) process.stderr.write(`avalake: warning: ${problem}\n`);
    if (args.check) {
      const committed = await readCommitted(out);
      if (committed === dictionary.markdown) {
        process.stdout.write(`${out} is up to date\n`);
        return EXIT.ok;
      }
      process.stderr.write(
        committed === undefined
          ? `avalake: ${out} does not exist; run "avalake docs" to write it, and commit it\n`
          : `avalake: ${out} is out of date with the models; run "avalake docs" and commit it\n`,
      );
      return EXIT.failed;
    }
    await writeOutput('--out', out, dictionary.markdown);
    process.stdout.write(`wrote ${out}\n`);
    return EXIT.ok;
  } catch (error) {
    return reportWarehouseError(error);
  }
}

/** The dictionary as committed; undefined when there is none. A folder, or a file it cannot read, is a usage mistake. */
async function readCommitted(out: string): Promise<string | undefined> {
  try {
    return await readFile(out, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') throw new WarehouseUsageError(`--out ${out} is a folder; name a file in it`);
    throw new WarehouseUsageError(`--out ${out}: cannot read it: ${errnoReason(error)}`);
  }
}
