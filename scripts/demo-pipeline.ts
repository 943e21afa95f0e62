// Writes pipelines/demo.json (the emulator's seed-1 Fuji world) and pipelines/pipeline.schema.json.
import { writeFileSync } from 'node:fs';
import { createClock } from '../src/emulator/clock.ts';
import { demoPipelineOf } from '../src/emulator/demo-pipeline.ts';
import { DEFAULT_SEED } from '../src/emulator/index.ts';
import { createWorld } from '../src/emulator/world/index.ts';
import { pipelineJsonSchema } from '../src/extract/config.ts';
import { STREAM_NAMES } from '../src/extract/streams/index.ts';

/** The port `npm run demo` and `avalake emulator --port 8417` serve on. */
const DEMO_URL = 'http://127.0.0.1:8417';

// The file is the same whatever day this runs (demoPipelineOf names only ids every world of the seed
// has); test/cli/demo-any-date.test.ts holds it to that.
const world = createWorld({ seed: DEFAULT_SEED, scale: 'small', clock: createClock('real') });
// Every stream, the opt-in whole-chain walks included; a week of history keeps the first run of
// `npm run demo` within a minute (the emulator's C-Chain makes a block every 2 s).
const demo = { ...demoPipelineOf(world, 'fuji', DEMO_URL), streams: STREAM_NAMES, start: '7d' };
writeFileSync('pipelines/demo.json', `${JSON.stringify(demo, null, 2)}\n`);
writeFileSync('pipelines/pipeline.schema.json', `${JSON.stringify(pipelineJsonSchema(), null, 2)}\n`);
console.log('wrote pipelines/demo.json and pipelines/pipeline.schema.json');
