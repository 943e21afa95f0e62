#!/usr/bin/env node
// The CLI's front door is plain JavaScript: it runs the built CLI while it is current, else the source
// (src/cli/entry.js says which), where a command registers tsx's loader for its TypeScript when it runs.
import { builtIsCurrent } from '../src/cli/entry.js';
import { processLimitOf, processLimitReason } from '../src/load/process-limits.js';

try {
  await import(
    builtIsCurrent(new URL('../', import.meta.url)) ? '../dist/cli/main.js' : '../src/cli/main.js'
  );
} catch (error) {
  // The module loader reads the CLI's files all at once: a low `ulimit -n` fails it before any command
  // began (a command's own failures of the kind are named by commands.js, with its exit code).
  const limit = processLimitOf(error);
  if (limit === undefined) throw error;
  process.stderr.write(
    `avalake: ${processLimitReason(limit)}; avalake stopped as it loaded, before it read or wrote anything\n`,
  );
  process.exitCode = 2; // EXIT.usage (src/cli/exit.js, which this file does not load)
}
