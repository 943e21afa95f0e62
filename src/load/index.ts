export { arrowSchemaOf, BATCH_ROWS, createRecordBatchBuilder, type RecordBatchBuilder } from './arrow.ts';
export { LakeSchemaError } from './columns.ts';
export {
  type Checkpoint,
  type CommitRecord,
  type CommittedFile,
  type DataCommit,
  type LiveFile,
  type PartitionState,
  type RecoveryReport,
  readLakeState,
  type StreamState,
} from './commit.ts';
export type { CompactionResult } from './compact.ts';
export { fsyncFile } from './durable.ts';
export { LakeCorruptError, RecordTypeError } from './errors.ts';
export type { Flush, Reject } from './flush.ts';
export { type Lake, type OpenLakeOptions, openLake } from './lake.ts';
export { FOLDER_KEYS, type Partition, partitionId } from './layout.ts';
export {
  acquireLock,
  type DataDirLock,
  LockHeldError,
  type LockHolder,
  type LockOptions,
  readLockHolder,
} from './lock.ts';
export { encodeParquet, writeParquetFile } from './parquet.ts';
export { rejectSchema } from './rejects.ts';
export { hasConfirmations } from './state.ts';
