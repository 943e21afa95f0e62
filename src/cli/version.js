// @ts-check
import { readFileSync } from 'node:fs';

/**
 * The package version, read once from package.json (also sent as the user-agent avalake/<version>).
 * Plain JavaScript: main.js prints it before the TypeScript loader exists.
 * @type {string}
 */
export const VERSION = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;
