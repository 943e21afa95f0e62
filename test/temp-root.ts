import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * vitest's global setup: every temporary directory of a test run goes under one root, removed when the run
 * ends. Tests make hundreds of workspaces (data directories, warehouses, PostgreSQL and S3 servers), and
 * not every one is removed when its test fails or is killed; without a root they pile up in /tmp run after
 * run (31 GB on this machine before it). `os.tmpdir()` reads TMPDIR, which the test forks and the CLI
 * processes they spawn inherit.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'avalake-tests-'));
  // PostgreSQL's initdb runs as the postgres user when the tests run as root: it must reach its directory.
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
