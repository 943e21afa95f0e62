// The registry reachable here does not carry every platform build of packages such as @biomejs/biome
// and @duckdb/node-bindings, so `npm install` leaves those optional entries out of package-lock.json and
// `npm ci` then refuses the lock ("Missing: … from lock file"). This adds the entries npm would have
// written (version, os, cpu, libc; npm skips them on other platforms), so the lock is complete again.
// Run after changing dependencies: npx tsx scripts/complete-lockfile.ts
import { readFileSync, writeFileSync } from 'node:fs';

type Entry = { version?: string; optional?: boolean; os?: string[]; cpu?: string[]; libc?: string[] } & {
  optionalDependencies?: Record<string, string>;
};
const path = 'package-lock.json';
const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages: Record<string, Entry> };
const PLATFORM = /(android|darwin|linux|win32)-(arm64|x64)(-musl)?$/;
let added = 0;
for (const [, entry] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const platform = PLATFORM.exec(name);
    if (lock.packages[key] || !platform) continue;
    lock.packages[key] = {
      version: range.replace(/^[\^~]/, ''),
      cpu: [platform[2] as string],
      optional: true,
      os: [platform[1] as string],
      ...(platform[3] ? { libc: ['musl'] } : {}),
    };
    added++;
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform entries`);
