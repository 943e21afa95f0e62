import { DEFAULT_QUORUM_PERCENTAGE } from '../schemas/warp-validators.ts';
import { describeSignedMessage } from '../warp/describe.ts';
import { verifyWarpMessage } from '../warp/verify.ts';
import { EXIT } from './exit.js';
import {
  checkLines,
  checkUrl,
  DEFAULT_NODE_URLS,
  hexArg,
  NETWORK_IDS,
  nodeValidators,
  percentArg,
  userAgentHttp,
  type WarpNetwork,
} from './warp-options.ts';

export interface VerifyArgs {
  hex: string;
  network: WarpNetwork;
  'node-url'?: string;
  /** As typed: commands.js takes it as a string so that a mistake is shown as typed. */
  quorum?: string | number;
  'signing-subnet'?: string;
}

/** The whole command, returning its exit code: 0 valid, 1 invalid or not checkable. */
export async function verifyMessage(args: VerifyArgs): Promise<number> {
  const bytes = hexArg('HEX', args.hex);
  const quorum = percentArg('--quorum', args.quorum) ?? DEFAULT_QUORUM_PERCENTAGE;
  const nodeUrl = checkUrl('--node-url', args['node-url'] ?? DEFAULT_NODE_URLS[args.network]);
  const http = userAgentHttp();
  try {
    const v = await verifyWarpMessage({
      bytes,
      networkId: NETWORK_IDS[args.network],
      quorumPercentage: quorum,
      validatorsOf: nodeValidators(http, nodeUrl, args['signing-subnet']),
    });
    const lines = v.message ? describeSignedMessage(v.message, v) : [];
    if (v.subnetId) lines.push(`signing subnet: ${v.subnetId} (validators from ${nodeUrl})`);
    process.stdout.write([...lines, ...checkLines(v), v.valid ? 'valid' : 'invalid', ''].join('\n'));
    if (v.failed)
      process.stderr.write(
        `avalake: the Warp message is invalid: the ${v.failed.name} check failed: ${v.failed.detail}\n`,
      );
    return v.valid ? EXIT.ok : EXIT.failed;
  } catch (error) {
    process.stderr.write(`avalake: could not verify the message: ${(error as Error).message}\n`);
    return EXIT.failed;
  } finally {
    await http.close();
  }
}
