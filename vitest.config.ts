import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/temp-root.ts'],
    // Two cores here: run files in two forks and give emulator walks room.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The S3 test helpers load the AWS SDK in the test process; its Node 20 notice is noise there (the
    // CLI silences it in src/load/s3-storage.ts, and package.json pins a release that supports Node 20).
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
