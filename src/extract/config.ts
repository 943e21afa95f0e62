import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { redactCatalogUrl } from '../load/catalog-url.ts';
import { isObjectStorage } from '../load/layout.ts';
import { ConfigError } from './errors.ts';
import { RETRY_COUNT } from './fetcher.ts';
import { apiKeyProblem } from './http.ts';
import { checkDataDir, resolveLakeLocation } from './location.ts';
import { BaseUrlSchema, historyEnd, historyStart, type Pipeline, PipelineSchema } from './pipeline.ts';
import type { StreamDefinition } from './stream.ts';
import { STREAMS } from './streams/index.ts';

export { ConfigError } from './errors.ts';

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
  /** Attempts after the first for a retryable failure (default RETRY_COUNT); a string as typed. */
  retries?: number | string;
  catalog?: string;
  localDir?: string;
}

/** Everything a run needs, resolved once: flag, then AVALAKE_* environment variable, then file, then default. */
export interface ExtractConfig {
  pipelinePath: string;
  pipeline: Pipeline;
  streams: readonly StreamDefinition[];
  /**
   * Every stream the pipeline file reads (its `streams`, or all it feeds), whatever `--streams` picked
   * for this run: `run` judges the freshness of their partitions, read by this run or by others.
   */
  pipelineStreams: readonly StreamDefinition[];
  dataDir: string;
  apiKey?: string;
  fullRefresh: boolean;
  wait: boolean;
  /** Set only when asked for (flag or AVALAKE_RETRIES); the fetcher's default otherwise. */
  retries?: number;
  /** A PostgreSQL catalog shared by several workers; none: the data directory's own commit log. */
  catalog?: string;
  /** Where the warehouse (and an object-storage lake's local copy) lives: the data directory when local. */
  localDir: string;
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
  const apiKey = given(flags.apiKey, '--api-key', env, 'AVALAKE_API_KEY');
  const keyProblem = apiKey && apiKeyProblem(apiKey.value);
  if (keyProblem) throw new ConfigError(`${apiKey.source} ${keyProblem}`);
  const retries = parseRetries(given(flags.retries, '--retries', env, 'AVALAKE_RETRIES'));
  const raw = await readPipelineFile(pipelinePath);
  // Checked before they join the file's urls, so that a mistake names the flag or variable, not the file.
  const urls = {
    ...(raw.urls ?? {}),
    ...defined({
      data: checkedUrl(given(flags.baseUrl, '--base-url', env, 'AVALAKE_BASE_URL')),
      metrics: checkedUrl(given(flags.metricsUrl, '--metrics-url', env, 'AVALAKE_METRICS_URL')),
      node: checkedUrl(given(flags.nodeUrl, '--node-url', env, 'AVALAKE_NODE_URL')),
    }),
  };
  const input = { ...raw, urls, name: raw.name ?? basename(pipelinePath, '.json') };
  const parsed = PipelineSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  ${describeIssue(i, input)}`);
    throw new ConfigError(
      `${pipelinePath} is not a valid pipeline:\n${problems.join('\n')}\nSee pipelines/pipeline.schema.json for every field.`,
    );
  }
  const streamList = given(flags.streams, '--streams', env, 'AVALAKE_STREAMS');
  // Streams named on the command line replace the file's list, opt-in ones included; a typo in the
  // file's list is still one (it would surface only on the first run without --streams).
  if (streamList && parsed.data.streams) checkStreamNames(parsed.data.streams, `${pipelinePath}: "streams"`);
  const pipeline = streamList
    ? { ...parsed.data, streams: splitStreams(streamList.value, streamList.source) }
    : parsed.data;
  checkPageSizes(pipelinePath, pipeline);
  checkMetrics(pipelinePath, raw, pipeline);
  checkWindow(pipelinePath, pipeline);
  const streams = selectStreams(
    pipeline.streams,
    pipeline,
    streamList?.source ?? `${pipelinePath}: "streams"`,
  );
  const dataDirGiven = given(flags.dataDir, '--data-dir', env, 'AVALAKE_DATA_DIR');
  const { dataDir, catalog, localDir } = await resolveLakeLocation(
    {
      dataDir: dataDirGiven?.value ?? 'data',
      ...defined({ catalog: flags.catalog, localDir: flags.localDir }),
    },
    env,
    pipeline.catalog,
  );
  if (!isObjectStorage(dataDir)) await checkDataDir(dataDir, dataDirGiven?.source);
  return Object.freeze({
    pipelinePath,
    pipeline,
    streams,
    pipelineStreams: streamList ? fileStreams(parsed.data) : streams,
    dataDir,
    localDir,
    ...defined({ apiKey: apiKey?.value, retries, catalog }),
    fullRefresh: flags.fullRefresh ?? env.AVALAKE_FULL_REFRESH === '1',
    wait: flags.wait ?? false,
  });
}

/** A value and where it came from (a flag, else an environment variable), for messages that name it. */
interface Given<T> {
  value: T;
  source: string;
}

function given<T>(
  flag: T | undefined,
  flagName: string,
  env: Readonly<Record<string, string | undefined>>,
  envName: string,
): Given<T | string> | undefined {
  if (flag !== undefined) return { value: flag, source: flagName };
  const value = env[envName];
  return value === undefined ? undefined : { value, source: envName };
}

/** `--retries 3` or AVALAKE_RETRIES=3: a whole number from 0 to 100; an empty variable counts as unset. */
function parseRetries(retries: Given<number | string> | undefined): number | undefined {
  if (retries === undefined) return undefined;
  const { value, source } = retries;
  const text = String(value).trim();
  if (source === 'AVALAKE_RETRIES' && text === '') return undefined;
  const n = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isInteger(n) && n >= 0 && n <= 100) return n;
  const shownValue = `${named(source)}${JSON.stringify(value)}`;
  const why = Number.isNaN(n) ? 'is not a number' : Number.isInteger(n) ? 'is out of range' : 'is not whole';
  throw new ConfigError(`${shownValue} ${why}: give a whole number from 0 to 100 (default ${RETRY_COUNT})`);
}

/** A base URL from a flag or the environment: checked as the file's are, and named by where it came from. */
function checkedUrl(url: Given<string> | undefined): string | undefined {
  if (url === undefined) return undefined;
  const checked = BaseUrlSchema.safeParse(url.value);
  if (!checked.success)
    throw new ConfigError(
      `${url.source}: got ${shown(url.value)}; expected ${expectation(checked.error.issues[0]?.message ?? '')}`,
    );
  return url.value;
}

/** One line per zod issue: where, what was given, and what is expected. */
function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const where = issue.path.map(String).join('.') || '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const known = issue.path.length === 0 ? Object.keys(PipelineSchema.in.shape) : undefined;
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${
      known ? `; known keys: ${known.join(', ')}` : '; check its spelling against the schema'
    }`;
  }
  const value = valueAt(raw, issue.path);
  // A catalog URL may carry its password: never echoed.
  const given = where === 'catalog' && typeof value === 'string' ? redactCatalogUrl(value) : value;
  const got = given === undefined ? 'missing' : `got ${shown(given)}`;
  return `${where}: ${got}; expected ${expectation(issue.message)}`;
}

/** zod's default messages ("Invalid input: expected array, received string") without their preamble. */
const expectation = (message: string) =>
  message
    .replace(/^(Invalid input|Invalid option|Too small|Too big|Invalid string|Invalid number): /, '')
    .replace(/^expected /, '')
    .replace(/, received \w+$/, '')
    .replace(/"\|"/g, '", "');

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The largest page each stream's endpoint allows; streams read over the node RPC do not page. */

/** A page size the service would refuse is a configuration mistake, caught before any request. */
function checkPageSizes(path: string, pipeline: Pipeline): void {
  for (const [name, size] of Object.entries(pipeline.pageSize)) {
    const stream = STREAMS.find((s) => s.name === name);
    if (!stream)
      throw new ConfigError(
        `${path}: pageSize names unknown stream "${name}"; known streams: ${STREAMS.map((s) => s.name).join(', ')}`,
      );
    const max = stream.maxPageSize;
    if (max === undefined)
      throw new ConfigError(
        `${path}: pageSize.${name} is not allowed: ${name} is answered in one piece, without pages; remove it`,
      );
    if (size > max)
      throw new ConfigError(
        `${path}: pageSize.${name} is ${size}, over the maximum of ${max} that its endpoint allows; use at most ${max}, or leave it out for the maximum`,
      );
  }
}

/**
 * Day-only metrics (§4.18) are skipped for other intervals. That is silent when the metric list is the
 * default (all metrics); a metric the pipeline names explicitly that no interval can serve is a mistake.
 */
function checkMetrics(path: string, raw: RawPipeline, pipeline: Pipeline): void {
  const named = (raw.metrics as { metrics?: unknown } | undefined)?.metrics;
  if (!Array.isArray(named) || pipeline.metrics.chains.length === 0) return;
  const metricsStream = STREAMS.find((s) => s.name === 'metrics');
  if (!metricsStream) return;
  const served = new Set(metricsStream.partitions(pipeline).map((p) => p.metric));
  const unserved = pipeline.metrics.metrics.filter((m) => !served.has(m));
  if (unserved.length > 0) {
    throw new ConfigError(
      `${path}: metric${unserved.length > 1 ? 's' : ''} ${unserved.join(', ')} exist${unserved.length > 1 ? '' : 's'} only at interval "day", ` +
        `but metrics.intervals is ${JSON.stringify(pipeline.metrics.intervals)}; add "day" to metrics.intervals or remove the metric`,
    );
  }
}

/** `start` and `end` must leave a window; checked when a run begins, since "30d" moves with the clock. */
function checkWindow(path: string, pipeline: Pipeline): void {
  const start = historyStart(pipeline);
  const end = historyEnd(pipeline);
  if (start === undefined || end === undefined || start < end) return;
  const day = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);
  throw new ConfigError(
    `${path}: start "${pipeline.start}" (${day(start)}) is not before end "${pipeline.end}" (${day(end)}), so nothing would be read; move start earlier or end later (end is exclusive)`,
  );
}

async function readPipelineFile(path: string): Promise<RawPipeline> {
  let text: string;
  try {
    // An editor's UTF-8 byte-order mark is not part of the JSON.
    text = (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
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

/**
 * The named streams (all known ones the pipeline feeds when none are named), or a ConfigError. `source`
 * names where the names came from (`--streams`, AVALAKE_STREAMS or the file's `streams`).
 */
function selectStreams(
  names: readonly string[] | undefined,
  pipeline: Pipeline,
  source: string,
): StreamDefinition[] {
  if (names === undefined) {
    const fed = STREAMS.filter((s) => s.partitions(pipeline).length > 0);
    if (fed.length === 0)
      throw new ConfigError(
        'the pipeline feeds no stream: list addresses, node ids, subnets, EVM chains or metrics chains in it',
      );
    return fed;
  }
  // Only the file can name none: splitStreams refuses an empty --streams.
  if (names.length === 0)
    throw new ConfigError(
      `${source} is empty; name at least one stream, e.g. "streams": ["${STREAMS[0]?.name ?? 'rewards'}"], or remove the key to run every stream the pipeline feeds`,
    );
  checkStreamNames(names, source);
  const chosen = STREAMS.filter((s) => names.includes(s.name));
  const starved = chosen.filter((s) => s.partitions(pipeline).length === 0);
  if (starved.length > 0) {
    throw new ConfigError(
      starved
        .map((s) => `stream ${s.name} has nothing to read: list ${s.inputs ?? 'its inputs'} in the pipeline`)
        .join('\n'),
    );
  }
  return chosen;
}

/** The streams a pipeline file reads with nothing named on the command line, those with something to read. */
const fileStreams = (pipeline: Pipeline): StreamDefinition[] =>
  STREAMS.filter((s) => (pipeline.streams?.includes(s.name) ?? true) && s.partitions(pipeline).length > 0);

/** Every name is a stream's, or a ConfigError listing the known ones. */
function checkStreamNames(names: readonly string[], source: string): void {
  const unknown = names.filter((n) => !STREAMS.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new ConfigError(
      `${source}: unknown stream${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `"${n}"`).join(', ')}; known streams: ${STREAMS.map((s) => s.name).join(', ')}`,
    );
}

/** `--streams a,b`: an empty name (`a,,b`, `""`) is a typo, not "everything". */
function splitStreams(text: string, source: string): string[] {
  const names = text.split(',').map((s) => s.trim());
  if (names.includes('')) throw new ConfigError(emptyStreamName(text, source));
  return names;
}

/** The message for a stream list with an empty name; `compact --streams` says the same. */
export const emptyStreamName = (text: string, source = '--streams') =>
  `${named(source)}"${text}" has an empty stream name; give comma-separated names such as ${named(source)}rewards,utxos`;

/** `--flag ` or `VARIABLE=`, to show a value as it was given. */
const named = (source: string) => (source.startsWith('-') ? `${source} ` : `${source}=`);

function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The pipeline's JSON Schema, for editors (`pipelines/pipeline.schema.json`). */
export function pipelineJsonSchema(): unknown {
  return z.toJSONSchema(PipelineSchema, { io: 'input', unrepresentable: 'any' });
}
