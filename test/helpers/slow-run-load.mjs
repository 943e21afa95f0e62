// Loaded into a CLI process with `node --import` (NODE_OPTIONS): the `run` command's module takes a second
// longer to load, and the process says on stderr when that second begins, so a test can signal the CLI
// while it is still starting. Plain JavaScript: node loads it before any TypeScript loader.
import { register } from 'node:module';

register('./slow-run-load-hooks.mjs', import.meta.url);
