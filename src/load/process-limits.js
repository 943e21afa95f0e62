// @ts-check
import { readFileSync } from 'node:fs';

/**
 * A limit of the process, not a fault of avalake's nor of the data: too many open files (`ulimit -n`,
 * or the system's file table full), or a virtual memory limit (`ulimit -v`) too small for WebAssembly.
 * Everything that opens files or starts WebAssembly (the module loader, undici's connections and its
 * HTTP parser, the Parquet encoder, the lake, DuckDB) fails on them with words of its own; they are
 * recognised here once, and each command says what it means for its data.
 *
 * Note: plain JavaScript, so that commands.js can name a failure of the module loader itself, before
 * the TypeScript loader exists.
 */

/** @typedef {'open files' | 'file table' | 'memory'} ProcessLimit */

/** @type {readonly [RegExp, ProcessLimit][]} */
const LIMIT_WORDS = [
  // ENFILE's words contain EMFILE's ("Too many open files"): the more specific first.
  [/\bENFILE\b|Too many open files in system|file table overflow/i, 'file table'],
  [/\bEMFILE\b|Too many open files/i, 'open files'],
  // V8 reserves the address space of a WebAssembly memory whole (about 10 GiB, guard regions included):
  // undici's HTTP parser and the Parquet encoder each start one.
  [
    /Cannot allocate Wasm memory|WebAssembly\.Memory\(\): could not allocate memory|Out of memory: Cannot allocate Wasm/i,
    'memory',
  ],
];

/**
 * The process limit `error` (or an error in its chain of causes) ran into; undefined for anything else.
 * @param {unknown} error
 * @returns {ProcessLimit | undefined}
 */
export function processLimitOf(error) {
  for (let e = error, depth = 0; e && depth < 8; e = /** @type {Error} */ (e).cause, depth++) {
    const code = /** @type {NodeJS.ErrnoException} */ (e).code;
    if (code === 'EMFILE') return 'open files';
    if (code === 'ENFILE') return 'file table';
    const message = String(/** @type {Error} */ (e).message ?? '');
    const found = LIMIT_WORDS.find(([words]) => words.test(message));
    if (found) return found[1];
  }
  return undefined;
}

/**
 * What the limit is and how to raise it, as the first part of a one-line message: `too many open files:
 * raise \`ulimit -n\` (now 40) …`. The current value is read from /proc (Linux); left out elsewhere, or
 * when even that file cannot be opened.
 * @param {ProcessLimit} limit
 */
export function processLimitReason(limit) {
  switch (limit) {
    case 'open files': {
      const now = currentLimit('Max open files');
      return `too many open files: raise \`ulimit -n\`${now ? ` (now ${now})` : ''}, to 1024 or more`;
    }
    case 'file table':
      return "the system has too many files open (ENFILE): close other programs, or raise the kernel's fs.file-max";
    case 'memory': {
      const bytes = Number(currentLimit('Max address space'));
      const now = Number.isFinite(bytes) && bytes > 0 ? ` (now ${Math.floor(bytes / 1024)} KiB)` : '';
      return (
        `out of virtual memory: \`ulimit -v\`${now} is too small for WebAssembly (the HTTP parser, the ` +
        'Parquet encoder), which reserves about 10 GiB of address space per instance; raise it ' +
        '(`ulimit -v unlimited`), and cap memory with a cgroup (systemd MemoryMax) instead'
      );
    }
  }
}

/**
 * The soft limit named `name` in /proc/self/limits, as written there (`unlimited`, or a number);
 * undefined where it cannot be read.
 * @param {string} name
 */
function currentLimit(name) {
  limits ??= readLimits();
  const line = limits?.split('\n').find((l) => l.startsWith(name));
  return line?.slice(name.length).trim().split(/\s+/)[0];
}

const readLimits = () => {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * Read as this module loads (the limits stay as the process began, node having raised the soft limit
 * of open files to the hard one): once they are reached, opening /proc/self/limits fails as well.
 * @type {string | undefined}
 */
let limits = readLimits();
