import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.ts';
import { offlineNodes } from '../../src/emulator/warp/online.ts';
import { signingValidatorsAt } from '../../src/emulator/warp/validators.ts';
import { PRIMARY_CHAINS, PRIMARY_SUBNET_ID } from '../../src/emulator/world/networks.ts';
import { meetsQuorum } from '../../src/schemas/warp-validators.ts';
import { startEmulator } from '../helpers/emulator.ts';
import { exampleMessageFrom } from '../helpers/warp.ts';

let emulator: Emulator;
const message = exampleMessageFrom(PRIMARY_CHAINS.fuji.c).toString('hex');

/** Runs the real CLI; async, since the emulator answering it lives in this process. */
function avalake(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'node',
      ['bin/avalake.js', ...args],
      { env: { ...process.env, AVALAKE_API_KEY: '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  emulator = await startEmulator({ keys: 'k-secret-123:pro' });
});
afterAll(() => emulator?.close());

describe('avalake aggregate and verify-message, end to end against the emulator', () => {
  let signedHex = '';

  it('aggregate prints the signed message and its decoded view, exit 0; the key is never printed', async () => {
    const r = await avalake(
      'aggregate',
      '--network',
      'fuji',
      '--message',
      `0x${message}`,
      '--base-url',
      emulator.url,
      '--node-url',
      `${emulator.url}/fuji`,
      '--api-key',
      'k-secret-123',
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    signedHex = lines[0] as string;
    expect(signedHex.startsWith(message)).toBe(true);
    expect(r.stdout).toContain('network: fuji (network id 5)');
    expect(r.stdout).toContain(`source chain: ${PRIMARY_CHAINS.fuji.c}`);
    expect(r.stdout).toContain('payload: AddressedCall from 0x253b2784c75e510dd0ff1da844684a1ac0aa5fcf');
    expect(r.stdout).toMatch(/signers: \d+ of \d+/);
    expect(r.stdout).toMatch(/signed weight: \d+\.\d\d%/);
    expect(r.stdout + r.stderr).not.toContain('k-secret-123');
  });

  it('verify-message: the signed message is valid, exit 0', async () => {
    const r = await avalake(
      'verify-message',
      signedHex,
      '--network',
      'fuji',
      '--node-url',
      `${emulator.url}/fuji`,
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim().endsWith('valid')).toBe(true);
  });

  it('verify-message: a tampered payload is invalid, exit 1, naming the signature check', async () => {
    const bytes = Buffer.from(signedHex, 'hex');
    bytes[60] = (bytes[60] as number) ^ 0xff;
    const r = await avalake(
      'verify-message',
      bytes.toString('hex'),
      '--network',
      'fuji',
      '--node-url',
      `${emulator.url}/fuji`,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the signature check failed');
  });

  it('aggregate: a quorum the online validators cannot reach is exit 1 with the service’s reason', async () => {
    // A quorum above what the online validators hold but within what every BLS-keyed validator holds:
    // the request is valid, and fails only because some validators do not answer now.
    const now = emulator.clock.now();
    const validators = signingValidatorsAt(emulator.truth, 'fuji', PRIMARY_SUBNET_ID, now) ?? [];
    const offline = offlineNodes(emulator.truth.seed, 'fuji', validators, now);
    const total = validators.reduce((sum, v) => sum + v.weight, 0n);
    const keyed = validators.filter((v) => v.publicKey);
    const sum = (vs: typeof keyed) => vs.reduce((s, v) => s + v.weight, 0n);
    const online = sum(keyed.filter((v) => !offline.has(v.nodeId)));
    const quorum = Number((online * 100n) / total) + 1;
    expect(meetsQuorum(online, total, quorum)).toBe(false);
    expect(meetsQuorum(sum(keyed), total, quorum)).toBe(true);
    const r = await avalake(
      'aggregate',
      '--network',
      'fuji',
      '--message',
      message,
      '--quorum',
      String(quorum),
      '--base-url',
      emulator.url,
      '--node-url',
      `${emulator.url}/fuji`,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('failed to aggregate signatures');
  });

  it.each([
    [['aggregate', '--network', 'fuji'], 'pass --message HEX'],
    [['aggregate', '--network', 'fuji', '--message', 'xyz'], '--message: expected hex bytes'],
    [
      ['aggregate', '--network', 'fuji', '--message', '00'],
      '--message is not an unsigned Warp message: it is 1 bytes, shorter than the 42-byte Warp message header',
    ],
    [
      ['aggregate', '--network', 'fuji', '--message', `${message}00`],
      '--message is not an unsigned Warp message: it declares a',
    ],
    [
      ['aggregate', '--network', 'fuji', '--message', 'ab', '--quorum', '90', '--buffer', '20'],
      '--quorum + --buffer',
    ],
    [['verify-message', 'nothex', '--network', 'fuji'], 'HEX: expected hex bytes'],
    [['verify-message', 'abcd', '--network', 'devnet'], 'Invalid values'],
  ])('bad usage is exit 2 with one line, no stack: %j', async (args, expected) => {
    const r = await avalake(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(expected);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
