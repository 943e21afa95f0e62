import type { CommandModule } from 'yargs';
import { DEFAULT_QUORUM_PERCENTAGE } from '../schemas/warp-validators.ts';
import { describeSignedMessage } from '../warp/describe.ts';
import { verifyWarpMessage } from '../warp/verify.ts';
import {
  checkLines,
  checkUrl,
  DEFAULT_NODE_URLS,
  hexArg,
  NETWORK_IDS,
  nodeValidators,
  percentArg,
  userAgentHttp,
  WARP_NETWORKS,
  type WarpNetwork,
} from './warp-options.ts';

interface VerifyArgs {
  hex: string;
  network: WarpNetwork;
  'node-url'?: string;
  quorum?: number;
  'signing-subnet'?: string;
}

export const verifyMessageCommand: CommandModule<object, VerifyArgs> = {
  command: 'verify-message <hex>',
  describe:
    'Check a signed Warp message against the current validator set from a node (exit 0 valid, 1 invalid)',
  builder: (y) =>
    y
      .positional('hex', {
        type: 'string',
        demandOption: true,
        describe: 'The signed message, hex (0x optional)',
      })
      .option('network', { choices: WARP_NETWORKS, demandOption: true, describe: 'Network of the message' })
      .option('node-url', {
        type: 'string',
        describe: 'Node whose P-Chain RPC gives the validators (default: the public API node of the network)',
      })
      .option('quorum', {
        type: 'number',
        describe: `Percentage of the signing subnet's weight that must have signed (default ${DEFAULT_QUORUM_PERCENTAGE})`,
      })
      .option('signing-subnet', {
        type: 'string',
        describe: "Subnet whose validators signed (default: the source chain's subnet)",
      }),
  handler: async (args) => {
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
      process.exitCode = v.valid ? 0 : 1;
    } catch (error) {
      process.stderr.write(`avalake: could not verify the message: ${(error as Error).message}\n`);
      process.exitCode = 1;
    } finally {
      await http.close();
    }
  },
};
