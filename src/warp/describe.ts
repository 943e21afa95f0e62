import { createHash } from 'node:crypto';
import { decodeWarpPayload, type SignedWarpMessage } from '../schemas/warp.ts';
import { type CanonicalValidatorSet, weightPercent } from '../schemas/warp-validators.ts';

const NETWORK_NAMES: Record<number, string> = { 1: 'mainnet', 5: 'fuji' };

/** A signed message for people: one `name: value` line per field. */
export function describeSignedMessage(
  m: SignedWarpMessage,
  view: { set?: CanonicalValidatorSet; signers?: number[]; signedWeight?: bigint } = {},
): string[] {
  const u = m.unsigned;
  const payload = decodeWarpPayload(u.payload);
  const payloadLine =
    payload.type === 'AddressedCall'
      ? `AddressedCall from 0x${payload.sourceAddress.toString('hex')}, ${payload.payload.length}-byte call payload`
      : payload.type === 'Hash'
        ? `Hash 0x${payload.hash.toString('hex')}`
        : `${u.payload.length} bytes (${payload.reason})`;
  const signers = view.signers ?? [];
  const lines = [
    `network: ${NETWORK_NAMES[u.networkId] ?? 'unknown'} (network id ${u.networkId})`,
    `source chain: ${u.sourceChainId} (0x${u.sourceChainIdBytes.toString('hex')})`,
    `message id: ${createHash('sha256').update(u.bytes).digest('hex')}`,
    `payload: ${payloadLine}`,
    `signer bitset: 0x${m.signers.toString('hex')}`,
  ];
  if (view.set) {
    const nodes = signers.flatMap((i) => view.set?.validators[i]?.nodeIds ?? []);
    lines.push(
      `signers: ${signers.length} of ${view.set.validators.length} (canonical indices ${signers.join(', ')}): ${nodes.join(', ')}`,
      `signed weight: ${weightPercent(view.signedWeight ?? 0n, view.set.totalWeight)}% (${view.signedWeight ?? 0n} of ${view.set.totalWeight})`,
    );
  }
  lines.push(`signature: 0x${m.signature.toString('hex')}`);
  return lines;
}
