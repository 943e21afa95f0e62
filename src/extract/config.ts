import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { type Pipeline, PipelineSchema } from './pipeline.ts';
import type { StreamDefinition } from './stream.ts';
import { STREAMS } from './streams/index.ts';

/** A mistake in the configuration: one clear line for the user, exit 2, nothing written. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** What `avalake extract` is asked on its command line; every field optional. */
export interface ExtractFlags {
  pipeline?: string;
  streams?: string;
  dataDir?: string;
  baseUrl?: string;
  metricsUrl?: string;
  nodeUrl?: string;
  apiKey?: string;
  fullRefresh?: boolean;
  wait?: boolean;
}

/** Everything a run needs, resolved once: flag, then AVALAKE_* environment variable, then file, then default. */
export interface ExtractConfig {
  pipelinePath: string;
  pipeline: Pipeline;
  streams: readonly StreamDefinition[];
  dataDir: string;
  apiKey?: string;
  fullRefresh: boolean;
  wait: boolean;
}

export const DEFAULT_PIPELINE = 'pipelines/demo.json';

/** A pipeline file as read, before the schema checks it. */
type RawPipeline = { name?: unknown; urls?: Record<string, unknown> } & Record<string, unknown>;

/** The only reader of `process.env` (passed in, so tests need no global state). */
export async function resolveExtractConfig(
  flags: ExtractFlags,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Readonly<ExtractConfig>> {
  const pipelinePath = flags.pipeline ?? env.AVALAKE_PIPELINE ?? DEFAULT_PIPELINE;
  const raw = await readPipelineFile(pipelinePath);
  const urls = {
    ...(raw.urls ?? {}),
    ...defined({
      data: flags.baseUrl ?? env.AVALAKE_BASE_URL,
      metrics: flags.metricsUrl ?? env.AVALAKE_METRICS_URL,
      node: flags.nodeUrl ?? env.AVALAKE_NODE_URL,
    }),
  };
  const parsed = PipelineSchema.safeParse({
    ...raw,
    urls,
    name: raw.name ?? basename(pipelinePath, '.json'),
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(top level)'}: ${i.message}`);
    throw new ConfigError(
      `${pipelinePath} is not a valid pipeline:\n${problems.join('\n')}\nSee pipelines/pipeline.schema.json for every field.`,
    );
  }
  const pipeline = parsed.data;
  const streamList = flags.streams ?? env.AVALAKE_STREAMS;
  const names = streamList !== undefined ? splitList(streamList) : pipeline.streams;
  return Object.freeze({
    pipelinePath,
    pipeline,
    streams: selectStreams(names, pipeline),
    dataDir: flags.dataDir ?? env.AVALAKE_DATA_DIR ?? 'data',
    ...defined({ apiKey: flags.apiKey ?? env.AVALAKE_API_KEY }),
    fullRefresh: flags.fullRefresh ?? env.AVALAKE_FULL_REFRESH === '1',
    wait: flags.wait ?? false,
  });
}

async function readPipelineFile(path: string): Promise<RawPipeline> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `pipeline ${path} does not exist; name a file such as pipelines/demo.json`
        : `pipeline ${path} cannot be read (${code ?? (error as Error).message})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`pipeline ${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(`pipeline ${path} must hold a JSON object with at least "network"`);
  return value as RawPipeline;
}

/** The named streams (all known ones the pipeline feeds when none are named), or a ConfigError. */
function selectStreams(names: readonly string[] | undefined, pipeline: Pipeline): StreamDefinition[] {
  if (names === undefined) return STREAMS.filter((s) => s.partitions(pipeline).length > 0);
  const unknown = names.filter((n) => !STREAMS.some((s) => s.name === n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `unknown stream${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; known streams: ${STREAMS.map((s) => s.name).join(', ')}`,
    );
  }
  const chosen = STREAMS.filter((s) => names.includes(s.name));
  const starved = chosen.filter((s) => s.partitions(pipeline).length === 0);
  if (starved.length > 0) {
    throw new ConfigError(
      `stream ${starved.map((s) => s.name).join(', ')} has nothing to read: the pipeline lists no addresses, node ids, chains or metrics for it`,
    );
  }
  return chosen;
}

const splitList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The pipeline's JSON Schema, for editors (`pipelines/pipeline.schema.json`). */
export function pipelineJsonSchema(): unknown {
  return z.toJSONSchema(PipelineSchema, { io: 'input', unrepresentable: 'any' });
}
