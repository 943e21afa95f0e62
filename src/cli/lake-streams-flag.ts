import { emptyStreamName } from '../extract/config.ts';
import { readLakeState } from '../load/index.ts';

/**
 * `--streams a,b` of a command that works on a lake's committed streams (compact, repair): the names,
 * or undefined for every stream; or, refused, the one line to print (exit 2). An empty name (`a,,b`,
 * `""`) is a typo, not "every stream", as extract refuses it; a name the lake has nothing committed for
 * is named with the streams it has.
 */
export async function lakeStreamsFlag(
  flag: string | undefined,
  dataDir: string,
  catalog?: string,
): Promise<{ streams: string[] | undefined } | { refused: string }> {
  if (flag === undefined) return { streams: undefined };
  const streams = flag.split(',').map((s) => s.trim());
  if (streams.includes('')) return { refused: emptyStreamName(flag) };
  const known = [...(await readLakeState(dataDir, catalog)).keys()];
  const unknown = streams.filter((s) => !known.includes(s));
  if (unknown.length === 0) return { streams };
  return {
    refused:
      `--streams: ${unknown.join(', ')} ${unknown.length === 1 ? 'has' : 'have'} nothing committed in ${dataDir}; ` +
      `streams there: ${known.join(', ') || 'none'}`,
  };
}
