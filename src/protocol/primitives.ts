/**
 * Kafka wire-protocol primitives: a bounds-checked zero-copy `Reader` and a
 * chunked, growable `Writer`.
 *
 * Representation conventions (shared with the generated codecs):
 *  - int8/int16/int32/uint16/float64: number; int64: bigint
 *  - uuid: 32-char lowercase hex string (zero uuid = ZERO_UUID)
 *  - bytes / records: Buffer (decoded as a view into the input, not a copy)
 */

export * from './codec-errors';
export * from './encoding';
export * from './reader';
export * from './writer';

export const ZERO_UUID = '00000000000000000000000000000000';
export const EMPTY_BUFFER: Buffer = Buffer.alloc(0);
