#!/usr/bin/env node
// The CLI's front door is plain JavaScript; a command registers tsx's loader for its TypeScript modules
// when it runs, so a checkout works without a build step and `--help` does not wait for the loader.
await import('../src/cli/main.js');
