export * from './lake.ts';
