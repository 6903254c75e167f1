// Records inside a v2 batch (DefaultRecord): reading them when a feature needs them, Kafka's record-level
// validation, and building batches (tests, control markers, internal topics). One entry for the four files
// that do it; walkRecords, the parser they share, stays inside.
export { decodeRecords, decodeRecordsSync, InvalidRecordError, type DecodedRecord, type RecordHeader } from './decode-records';
export * from './validate-records';
export * from './build-batch';
export * from './control-records';
