import { readdirSync } from 'node:fs';
import type { StreamDefinition } from '../stream.ts';

/**
 * Every stream avalake knows: each `*.ts` file of this folder that exports stream definitions. Adding a
 * stream is adding its file; nothing else in the engine changes. Ordered by name, so plans and
 * summaries are stable.
 */
const folder = new URL('.', import.meta.url);
const files = readdirSync(folder).filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'fields.ts');
const modules = await Promise.all(
  files.map((f) => import(new URL(f, folder).href) as Promise<Record<string, unknown>>),
);

const isStream = (x: unknown): x is StreamDefinition =>
  typeof x === 'object' && x !== null && 'name' in x && 'strategy' in x && 'schema' in x && 'partitions' in x;

export const STREAMS: readonly StreamDefinition[] = modules
  .flatMap((m) => Object.values(m).filter(isStream))
  .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const duplicate = STREAMS.find((s, i) => STREAMS.findIndex((t) => t.name === s.name) !== i);
if (duplicate) throw new Error(`two stream files define a stream named ${duplicate.name}`);

export const STREAM_NAMES = STREAMS.map((s) => s.name);
