import { z } from 'zod';
import { lake } from '../schemas/lake.ts';

/**
 * A row of the rejects table (`data/lake/_rejects/stream=<s>/network=<n>/*.parquet`): the record as
 * received and why it was refused, plus the usual lineage. `stream` and `network` repeat the Hive folders
 * so a file read on its own still says where it came from.
 */
export const rejectSchema = z.object({
  stream: z.string(),
  partition: lake.json(),
  raw: z.string(),
  reason: z.string(),
});

export type RejectRow = z.infer<typeof rejectSchema>;
