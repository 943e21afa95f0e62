#!/usr/bin/env node
// The CLI is TypeScript run through tsx's loader, so a checkout works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
