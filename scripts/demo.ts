// `npm run demo`: the emulator in-process, then `avalake run` of pipelines/demo.json against it into data/
// (extract, build the warehouse, test it), then where to look next. Run it again: only what is new is fetched.

import { existsSync } from 'node:fs';
import { run } from '../src/cli/run.ts';
import { createContinuedEmulator } from '../src/emulator/continued.ts';
import { DEFAULT_SEED } from '../src/emulator/index.ts';

const started = Date.now();
// Run again on a later day, the same world goes on (its genesis is kept in data/).
const emulator = await createContinuedEmulator('data', { seed: DEFAULT_SEED, rateLimit: 'off' });
process.stdout.write(`emulator listening on ${emulator.url} (seed ${DEFAULT_SEED}, real clock)\n\n`);
let code: number;
try {
  code = await run(
    {
      pipeline: 'pipelines/demo.json',
      dataDir: 'data',
      baseUrl: emulator.url,
      metricsUrl: emulator.url,
      nodeUrl: `${emulator.url}/fuji`,
      // On a terminal the live progress shows; in a log, only warnings and errors.
      ...(process.stderr.isTTY ? { logFormat: 'pretty' as const } : { quiet: true }),
    },
    process.env,
  );
} finally {
  await emulator.close();
}

const report = existsSync('src/cli/report.ts')
  ? '  npx avalake report                    an HTML page of charts from the marts: data/report.html\n'
  : '';
if (code === 0) {
  process.stdout.write(`
Done in ${Math.round((Date.now() - started) / 1000)}s. The warehouse is data/warehouse.duckdb; the lake data/lake/<stream>/network=fuji/…/*.parquet.
Next:
  npx avalake sql "select reward_day, sum(reward_navax) / 1e9 as avax from rewards_daily group by all order by 1 desc limit 7"
  npx avalake sql "select snapshot_day, count_validators, total_stake_navax / 1e9 as avax, nakamoto_coefficient from stake_distribution_daily"
  npx avalake sql "select chain_id, metric_day, tx_count, active_addresses from chain_metrics_daily order by metric_day desc limit 9"
  npx avalake sql "show tables"         every model; docs/data-dictionary.md says what each column means
${report}  npx avalake status                    what each stream and partition holds, and how fresh
  npm run demo                          again: the world has moved on, only what is new is fetched
  duckdb -c "select rewardType, count(*), sum(reward.amount) from read_parquet('data/lake/rewards/**/*.parquet', hive_partitioning = true) group by all"
`);
}
process.exit(code);
