'use strict';
// kafkajs ships gzip only; snappy, lz4 and zstd are plugged in by the application through
// CompressionCodecs, as the kafkajs-snappy / kafkajs-lz4 / @kafkajs/zstd packages do. These are the same
// few lines on the native codec packages Fjord already depends on (snappy, lz4-napi, @mongodb-js/zstd).
const { CompressionTypes, CompressionCodecs } = require('kafkajs');

const XERIAL = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]); // snappy-java's stream header

function snappyCodec() {
  const snappy = require('snappy');
  return {
    // Raw snappy, as kafkajs-snappy, librdkafka and franz-go write it.
    compress: (encoder) => snappy.compress(encoder.buffer),
    // Java writes xerial framing: 16-byte header, then [int32 length][raw snappy block]...
    async decompress(buffer) {
      if (!buffer.subarray(0, 8).equals(XERIAL)) return snappy.uncompress(buffer, { asBuffer: true });
      const blocks = [];
      for (let pos = 16; pos < buffer.length; ) {
        const len = buffer.readInt32BE(pos);
        blocks.push(await snappy.uncompress(buffer.subarray(pos + 4, pos + 4 + len), { asBuffer: true }));
        pos += 4 + len;
      }
      return Buffer.concat(blocks);
    },
  };
}

function lz4Codec() {
  const lz4 = require('lz4-napi');
  return { compress: (encoder) => lz4.compressFrame(encoder.buffer), decompress: (buffer) => lz4.decompressFrame(buffer) };
}

function zstdCodec() {
  const zstd = require('@mongodb-js/zstd');
  return { compress: (encoder) => zstd.compress(encoder.buffer, 3), decompress: (buffer) => zstd.decompress(buffer) };
}

CompressionCodecs[CompressionTypes.Snappy] = snappyCodec;
CompressionCodecs[CompressionTypes.LZ4] = lz4Codec;
CompressionCodecs[CompressionTypes.ZSTD] = zstdCodec;

/** codec name -> kafkajs CompressionTypes value */
module.exports = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};
