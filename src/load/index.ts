export { BATCH_ROWS } from './batch-builder.ts';
export type { AllowanceSeen, AllowanceTake, Claim, SharedAllowance, WorkerStanding } from './catalog.ts';
export { LakeSchemaError } from './columns.ts';
export type {
  Checkpoint,
  CommitRecord,
  CommittedFile,
  DataCommit,
  LiveFile,
  PartitionState,
  RecoveryReport,
  StreamState,
} from './commit.ts';
export type { CompactionResult } from './compact.ts';
export { fsyncFile, mkdirDurable } from './durable.ts';
export {
  createInlineEncoder,
  createWorkerEncoder,
  type EncodingFile,
  ParquetEncodeError,
  type ParquetEncoder,
} from './encoder.ts';
export {
  damagedFileRemedy,
  LakeCorruptError,
  LakeFileDamagedError,
  type LakeKind,
  RecordTypeError,
} from './errors.ts';
export type { Flush, Reject } from './flush.ts';
export {
  type Lake,
  type OpenLakeOptions,
  openLake,
  openLakeStorage,
  readLakeState,
  readWorkers,
} from './lake.ts';
export { LakeMismatchError } from './lake-identity.ts';
export { FOLDER_KEYS, lakePaths, type Partition, partitionId } from './layout.ts';
export {
  acquireLock,
  type DataDirLock,
  LockHeldError,
  type LockHolder,
  LockLostError,
  type LockOptions,
  type LockStanding,
  readLockHolder,
  readLockStanding,
} from './lock.ts';
export { type ProcessLimit, processLimitOf, processLimitReason } from './process-limits.js';
export { CatalogRefusedError, CatalogUnavailableError, CommitConflictError } from './records.ts';
export { committedFileSize } from './recovery.ts';
export { rejectSchema } from './rejects.ts';
export {
  DAMAGED_FOLDER,
  type DroppedFile,
  type RepairStep,
  type RewoundPartition,
  repairCatalogLake,
  repairLake,
  type StreamRepair,
} from './repair.ts';
export {
  caughtUpAtOf,
  hasConfirmations,
  newestOf,
  newestStampOf,
  nextStamp,
  type Observation,
} from './state.ts';
export {
  baseName,
  diskStorage,
  eachLimited,
  isObjectStorage,
  type LakeStorage,
  parseObjectStorageUrl,
  StorageUnavailableError,
  stagedPath,
  withListedSizes,
} from './storage.ts';
