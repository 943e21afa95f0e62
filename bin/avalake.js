#!/usr/bin/env node
// The CLI's front door is plain JavaScript: it runs the built CLI while it is current, else the source
// (src/cli/entry.js says which), where a command registers tsx's loader for its TypeScript when it runs.
import { builtIsCurrent } from '../src/cli/entry.js';

await import(builtIsCurrent(new URL('../', import.meta.url)) ? '../dist/cli/main.js' : '../src/cli/main.js');
