// `npm run demo`: the emulator in-process, the demo pipeline extracted into data/, then what to look at.

import { extract } from '../src/cli/extract.ts';
import { createEmulator, DEFAULT_SEED } from '../src/emulator/index.ts';

const emulator = await createEmulator({ seed: DEFAULT_SEED, rateLimit: 'off' });
process.stdout.write(`emulator listening on ${emulator.url} (seed ${DEFAULT_SEED}, real clock)\n\n`);
const code = await extract(
  {
    pipeline: 'pipelines/demo.json',
    baseUrl: emulator.url,
    metricsUrl: emulator.url,
    nodeUrl: `${emulator.url}/fuji`,
    quiet: true,
    logFormat: 'pretty',
  },
  process.env,
);
await emulator.close();
if (code === 0) {
  process.stdout.write(`
The lake is in data/lake/<stream>/network=fuji/…/*.parquet. Next:
  npx avalake status                       what each stream and partition holds, and how fresh
  npx avalake extract                      run again: only what is new is fetched (needs "npx avalake emulator --port 8417")
  duckdb -c "select rewardType, count(*), sum(reward.amount) from read_parquet('data/lake/rewards/**/*.parquet', hive_partitioning = true) group by all"
`);
}
process.exit(code);
