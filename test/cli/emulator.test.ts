import { describe, expect, it } from 'vitest';
import { TEST_EPOCH } from '../helpers/emulator.ts';
import { LAUNCHER, runCli, startEmulatorProcess } from '../helpers/output.ts';

const DAY = 86_400;

/** Starts `avalake emulator ARGS`, returns what it printed once it listens, and stops it (SIGTERM). */
async function startupLines(args: readonly string[]): Promise<{ lines: string[]; code: number | null }> {
  const emulator = await startEmulatorProcess(LAUNCHER, ['--rate-limit', 'off', ...args], { NO_COLOR: '1' });
  return { lines: emulator.lines, code: (await emulator.stop()).code };
}

describe('avalake emulator --genesis', () => {
  it('prints the day its world begins, and a restart given that day serves the same world', async () => {
    const first = await startupLines(['--clock', `fixed:${TEST_EPOCH}`]);
    expect(first.lines[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    // 2026-11-02 less the small scale's 30 days of history.
    expect(first.lines[1]).toBe(
      'world of seed 1, scale small, history from 2026-10-03 (to serve this same world after a restart: --genesis 2026-10-03)',
    );
    const later = ['--clock', `fixed:${TEST_EPOCH + 3 * DAY}`];
    const pinned = await startupLines([...later, '--genesis', '2026-10-03']);
    expect(pinned.lines[1]).toContain('history from 2026-10-03');
    const unpinned = await startupLines(later);
    expect(unpinned.lines[1]).toContain('history from 2026-10-06');
    // SIGTERM as soon as it says it listens: it closes and exits 0 (its handlers come before the line).
    expect([first.code, pinned.code, unpinned.code]).toEqual([0, 0, 0]);
  });

  it.each([
    ['2026-13-01', 'expected a UTC date (YYYY-MM-DD) or the Unix seconds of a UTC midnight'],
    ['1793577601', '1793577601 is not a UTC midnight'],
    ['2026-11-03', "2026-11-03 is after the clock's day (2026-11-02)"],
  ])('refuses --genesis %s with a message, exit 2, before it listens', async (genesis, message) => {
    const { code, stdout, stderr } = await runCli([
      'emulator',
      '--port',
      '0',
      '--clock',
      `fixed:${TEST_EPOCH}`,
      '--genesis',
      genesis,
    ]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const [line, hint, ...rest] = stderr.trim().split('\n');
    expect(line).toContain(`avalake: --genesis: ${message}`);
    expect([hint, rest]).toEqual(['Run "avalake --help" for usage.', []]);
  });
});
