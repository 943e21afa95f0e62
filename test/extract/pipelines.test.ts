import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pipelineJsonSchema, resolveExtractConfig } from '../../src/extract/config.ts';

describe('the pipelines that ship', () => {
  it.each(readdirSync('pipelines').filter((f) => f.endsWith('.json') && f !== 'pipeline.schema.json'))(
    '%s is valid and feeds streams',
    async (file) => {
      const config = await resolveExtractConfig({ pipeline: `pipelines/${file}`, dataDir: 'data' }, {});
      expect(config.pipeline.name).toBe(file.replace(/\.json$/, ''));
      expect(config.streams.length).toBeGreaterThanOrEqual(4);
    },
  );

  it('mainnet-staking points at the real services by default', async () => {
    const config = await resolveExtractConfig(
      { pipeline: 'pipelines/mainnet-staking.json', dataDir: 'data' },
      {},
    );
    expect(config.pipeline.urls).toEqual({
      data: 'https://data-api.avax.network',
      metrics: 'https://metrics.avax.network',
      node: 'https://api.avax.network',
    });
    expect(config.streams.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        'rewards',
        'delegators',
        'staking_transactions',
        'utxos',
        'metrics',
        'validators',
      ]),
    );
  });

  it('pipeline.schema.json is the one the zod schema generates (npm run demo-pipeline)', () => {
    expect(JSON.parse(readFileSync('pipelines/pipeline.schema.json', 'utf8'))).toEqual(pipelineJsonSchema());
  });
});
