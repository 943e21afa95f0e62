import { apiKeyProblem } from '../extract/http.ts';
import { DEFAULT_URLS } from '../extract/pipeline.ts';
import { parseSignedWarpMessage, parseWarpMessageInput } from '../schemas/warp.ts';
import { DEFAULT_QUORUM_PERCENTAGE } from '../schemas/warp-validators.ts';
import { type AggregationBody, requestAggregation } from '../warp/aggregate.ts';
import { describeSignedMessage } from '../warp/describe.ts';
import { verifyWarpMessage } from '../warp/verify.ts';
import { UsageError } from './errors.ts';
import { EXIT } from './exit.js';
import {
  checkLines,
  checkUrl,
  DEFAULT_NODE_URLS,
  heightArg,
  hexArg,
  NETWORK_IDS,
  nodeValidators,
  percentArg,
  userAgentHttp,
  type WarpNetwork,
} from './warp-options.ts';

export interface AggregateArgs {
  network: WarpNetwork;
  message?: string;
  justification?: string;
  /** Numbers as typed: commands.js takes them as strings so that a mistake is shown as typed. */
  quorum?: string | number;
  buffer?: string | number;
  'p-chain-height'?: string | number;
  'signing-subnet'?: string;
  'base-url'?: string;
  'node-url'?: string;
  'api-key'?: string;
}

/** The request body from the flags; every mistake is a UsageError (exit 2) before anything is sent. */
function bodyOf(args: AggregateArgs): AggregationBody {
  if (args.message === undefined && args.justification === undefined)
    throw new UsageError('pass --message HEX (the unsigned Warp message) or --justification HEX');
  const quorum = percentArg('--quorum', args.quorum);
  const buffer = percentArg('--buffer', args.buffer);
  if ((quorum ?? DEFAULT_QUORUM_PERCENTAGE) + (buffer ?? 0) > 100)
    throw new UsageError('--quorum + --buffer must not be greater than 100');
  const height = heightArg('--p-chain-height', args['p-chain-height']);
  const hex = (name: string, value: string | undefined) =>
    value === undefined ? undefined : hexArg(name, value).toString('hex');
  const message = hex('--message', args.message);
  // Checked here rather than by the service: its refusal costs a request, and says less.
  const parsed = message === undefined ? undefined : parseWarpMessageInput(Buffer.from(message, 'hex'));
  if (typeof parsed === 'string')
    throw new UsageError(
      `--message is not an unsigned Warp message: it ${parsed}; pass its bytes as hex, raw or as the SendWarpMessage log's data`,
    );
  const justification = hex('--justification', args.justification);
  return {
    ...(message ? { message } : {}),
    ...(justification ? { justification } : {}),
    ...(args['signing-subnet'] ? { signingSubnetId: args['signing-subnet'] } : {}),
    ...(quorum !== undefined ? { quorumPercentage: quorum } : {}),
    ...(buffer !== undefined ? { quorumPercentageBuffer: buffer } : {}),
    ...(height !== undefined ? { pChainHeight: height } : {}),
  };
}

/** The whole command, returning its exit code. */
export async function aggregate(args: AggregateArgs): Promise<number> {
  const body = bodyOf(args);
  const baseUrl = checkUrl('--base-url', args['base-url'] ?? DEFAULT_URLS.data);
  const nodeUrl = checkUrl('--node-url', args['node-url'] ?? DEFAULT_NODE_URLS[args.network]);
  const apiKey = args['api-key'] ?? process.env.AVALAKE_API_KEY;
  const keyProblem = apiKey && apiKeyProblem(apiKey);
  if (keyProblem)
    throw new UsageError(`${args['api-key'] !== undefined ? '--api-key' : 'AVALAKE_API_KEY'} ${keyProblem}`);
  const http = userAgentHttp({ ...(apiKey ? { apiKey } : {}), keyedUrl: baseUrl });
  try {
    let signed: Buffer;
    try {
      signed = await requestAggregation({ http, baseUrl, network: args.network, body });
    } catch (error) {
      process.stderr.write(`avalake: signature aggregation failed: ${(error as Error).message}\n`);
      return EXIT.failed;
    }
    const message = parseSignedWarpMessage(signed);
    if (typeof message === 'string') {
      process.stderr.write(`avalake: the service returned a signed message that ${message}\n`);
      return EXIT.failed;
    }
    process.stdout.write(`${signed.toString('hex')}\n`);
    // The weights come from the node's current set; a failure there only limits the view.
    try {
      const v = await verifyWarpMessage({
        bytes: signed,
        networkId: NETWORK_IDS[args.network],
        quorumPercentage: body.quorumPercentage ?? DEFAULT_QUORUM_PERCENTAGE,
        validatorsOf: nodeValidators(http, nodeUrl, args['signing-subnet']),
      });
      process.stdout.write(`${[...describeSignedMessage(message, v), ...checkLines(v)].join('\n')}\n`);
      if (v.failed)
        process.stderr.write(
          `avalake: warning: against the current validators of ${nodeUrl}, the ${v.failed.name} check fails: ${v.failed.detail}\n`,
        );
    } catch (error) {
      process.stdout.write(
        `${[...describeSignedMessage(message), `signed weight: unknown (${(error as Error).message})`].join('\n')}\n`,
      );
    }
    return EXIT.ok;
  } finally {
    await http.close();
  }
}
