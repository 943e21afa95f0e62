import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAUNCHER, runCli, startEmulatorProcess } from '../helpers/output.ts';

const ENTRY = fileURLToPath(new URL('../../bin/avalake.js', import.meta.url));

/**
 * The launcher as npm installs avalake in another project: node_modules/avalake links to the package,
 * and node_modules/.bin/avalake to ../avalake/bin/avalake, a relative link through that one.
 */
function linkedLauncher(): string {
  const project = mkdtempSync(join(tmpdir(), 'avalake-project-'));
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(fileURLToPath(new URL('../..', import.meta.url)), join(project, 'node_modules', 'avalake'));
  const link = join(project, 'node_modules', '.bin', 'avalake');
  symlinkSync('../avalake/bin/avalake', link);
  return link;
}

/** Starts the emulator through `command` and reads, from /proc, what the process it started runs with. */
async function emulatorProcess(command: string, env: Record<string, string>) {
  const emulator = await startEmulatorProcess(command, [], env);
  const read = (file: string) => readFileSync(`/proc/${emulator.pid}/${file}`, 'utf8').split('\0');
  const seen = { environ: read('environ'), cmdline: read('cmdline') };
  const { ended } = await emulator.stop();
  return { ...seen, ended };
}

describe('bin/avalake, the launcher npm links as `avalake`', () => {
  it('becomes node running bin/avalake.js, with glibc keeping large blocks in mappings of their own', async () => {
    const { environ, cmdline, ended } = await emulatorProcess(linkedLauncher(), {});
    // The process started is node itself (the launcher execs it), so a signal sent to it reaches avalake.
    expect([realpathSync(cmdline[1] ?? ''), cmdline[2]]).toEqual([ENTRY, 'emulator']);
    expect(environ).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    // And it ends on SIGTERM: with a shell left in between, the shell would have died alone.
    expect(ended).toBe(true);
  });

  it('keeps a threshold the caller chose', async () => {
    const { environ } = await emulatorProcess(LAUNCHER, { MALLOC_MMAP_THRESHOLD_: '262144' });
    expect(environ).toContain('MALLOC_MMAP_THRESHOLD_=262144');
    expect(environ).not.toContain('MALLOC_MMAP_THRESHOLD_=131072');
  });

  it('passes arguments, output and the exit code through', async () => {
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version);
    const bad = await runCli(['extract', '/nonexistent/pipeline.json', '--data-dir', tmpdir()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('/nonexistent/pipeline.json');
  });
});
