// Record batch v2, CRC-32C and the compression codecs. Knows nothing of the server or storage.
export * from './crc32c';
export * from './compression';
export * from './batch';
export * from './records';
