/**
 * Headers, header-version rules, framing, and hand-checked wire bytes of
 * flexible versions (which kafkajs cannot cross-check).
 */
import { expect } from 'chai';
import { execFileSync } from 'child_process';
import * as path from 'path';
import {
  ApiKey,
  apiSpecList,
  apiSpecs,
  decodeRequestHeader,
  decodeResponseHeader,
  encodeRequestFrame,
  encodeRequestHeader,
  encodeResponseFrame,
  encodeResponseHeader,
  getApiSpec,
  readRequestHeader,
  requestHeaderVersion,
  responseHeaderVersion,
} from '../../src/protocol/generated';
import { Reader, Writer } from '../../src/protocol/primitives';
import { decodeApiVersionsRequest } from '../../src/protocol/generated/ApiVersionsRequest';
import { decodeMetadataRequest } from '../../src/protocol/generated/MetadataRequest';
import { encodeMetadataResponse } from '../../src/protocol/generated/MetadataResponse';

function hex(s: string): Buffer {
  return Buffer.from(s.replace(/\s+/g, ''), 'hex');
}

describe('protocol headers and framing', () => {
  it('request header v2 keeps client_id a classic nullable string, then tagged fields', () => {
    const w = new Writer();
    encodeRequestHeader(w, { requestApiKey: 18, requestApiVersion: 3, correlationId: 1, clientId: 'ab' }, 2);
    const b = w.finishOne();
    expect(b.toString('hex')).to.equal('0012' + '0003' + '00000001' + '0002' + '6162' + '00');
    expect(decodeRequestHeader(new Reader(b), 2)).to.deep.equal({ requestApiKey: 18, requestApiVersion: 3, correlationId: 1, clientId: 'ab' });
    const w1 = new Writer();
    encodeRequestHeader(w1, { requestApiKey: 3, requestApiVersion: 1, correlationId: 2, clientId: null }, 1);
    expect(w1.finishOne().toString('hex')).to.equal('0003' + '0001' + '00000002' + 'ffff');
    const w0 = new Writer();
    encodeRequestHeader(w0, { requestApiKey: 3, requestApiVersion: 0, correlationId: 2, clientId: 'dropped' }, 0);
    expect(w0.finishOne().toString('hex')).to.equal('0003' + '0000' + '00000002');
  });

  it('response headers v0 and v1', () => {
    const w = new Writer();
    encodeResponseHeader(w, { correlationId: 7 }, 1);
    expect(w.finishOne().toString('hex')).to.equal('00000007' + '00');
    encodeResponseHeader(w, { correlationId: 7 }, 0);
    expect(w.finishOne().toString('hex')).to.equal('00000007');
    // unknown tagged fields in the header are skipped
    const r = new Reader(hex('00000009 01 05 02 aaaa ff'));
    expect(decodeResponseHeader(r, 1).correlationId).to.equal(9);
    expect(r.remaining()).to.equal(1);
  });

  it('header versions follow the API version flexibility; ApiVersions responses always use v0', () => {
    expect(requestHeaderVersion(ApiKey.Metadata, 8)).to.equal(1);
    expect(requestHeaderVersion(ApiKey.Metadata, 9)).to.equal(2);
    expect(responseHeaderVersion(ApiKey.Metadata, 8)).to.equal(0);
    expect(responseHeaderVersion(ApiKey.Metadata, 9)).to.equal(1);
    expect(requestHeaderVersion(ApiKey.ApiVersions, 3)).to.equal(2);
    expect(requestHeaderVersion(ApiKey.ApiVersions, 2)).to.equal(1);
    expect(responseHeaderVersion(ApiKey.ApiVersions, 3)).to.equal(0);
    expect(responseHeaderVersion(ApiKey.ApiVersions, 4)).to.equal(0);
    // APIs that are flexible from v0
    expect(requestHeaderVersion(ApiKey.DescribeTopicPartitions, 0)).to.equal(2);
    expect(responseHeaderVersion(ApiKey.DescribeTopicPartitions, 0)).to.equal(1);
    // an ApiVersions request newer than we know is still parsed with header v2 (KIP-511)
    expect(requestHeaderVersion(ApiKey.ApiVersions, 99)).to.equal(2);
    // unknown API key: v1 so that correlation id and client id can be read
    expect(requestHeaderVersion(9999, 0)).to.equal(1);
    expect(responseHeaderVersion(9999, 0)).to.equal(0);
  });

  it('api specs: every API key, name, version range and codecs', () => {
    expect(apiSpecList.length).to.equal(76);
    for (const s of apiSpecList) {
      expect(getApiSpec(s.apiKey)).to.equal(s);
      expect(s.minVersion).to.be.at.most(s.maxVersion);
      expect(s.flexibleMin === Infinity || (s.flexibleMin >= 0 && s.flexibleMin <= s.maxVersion + 1), s.name).to.equal(true);
    }
    expect(apiSpecs[ApiKey.Metadata].name).to.equal('Metadata');
    expect(apiSpecs[ApiKey.Produce].flexibleMin).to.equal(9);
    expect(apiSpecs[ApiKey.SaslHandshake].flexibleMin).to.equal(Infinity);
    expect(getApiSpec(4)).to.equal(undefined);
  });

  it('ApiVersionsRequest v3 as sent by the Java client', () => {
    // header v2 + body: client_software_name "x", client_software_version "1", no tagged fields
    const frame = hex('00000013' + '0012 0003 0000002a 0003 616263 00' + '02 78 02 31 00');
    const r = new Reader(frame);
    expect(r.int32()).to.equal(frame.length - 4);
    const h = readRequestHeader(r);
    expect(h).to.deep.equal({ requestApiKey: 18, requestApiVersion: 3, correlationId: 42, clientId: 'abc' });
    expect(decodeApiVersionsRequest(r, 3)).to.deep.equal({ clientSoftwareName: 'x', clientSoftwareVersion: '1', clusterId: null, nodeId: -1 });
    expect(r.remaining()).to.equal(0);
  });

  it('MetadataRequest v12 (flexible, nullable compact topic name, uuid)', () => {
    const body = hex('02' + '00112233445566778899aabbccddeeff' + '00' + '00' + '01' + '00' + '00');
    const m = decodeMetadataRequest(new Reader(body), 12);
    expect(m).to.deep.equal({
      topics: [{ topicId: '00112233445566778899aabbccddeeff', name: null }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    // null topics array (all topics) in v12
    expect(decodeMetadataRequest(new Reader(hex('00 00 00 00')), 12).topics).to.equal(null);
  });

  it('frames a response: size prefix, header, body', () => {
    const w = new Writer(16);
    const chunks = encodeResponseFrame(w, ApiKey.Metadata, 9, 77, { brokers: [], topics: [] });
    const frame = Buffer.concat(chunks);
    expect(frame.readInt32BE(0)).to.equal(frame.length - 4);
    const r = new Reader(frame, 4);
    expect(decodeResponseHeader(r, 1).correlationId).to.equal(77);
    const body = new Writer();
    encodeMetadataResponse(body, { brokers: [], topics: [] }, 9);
    expect(frame.subarray(r.offset).equals(body.finishOne())).to.equal(true);
    // ApiVersions v3 response: header v0 (no tagged fields after the correlation id)
    const av = Buffer.concat(encodeResponseFrame(w, ApiKey.ApiVersions, 3, 5, { errorCode: 0, apiKeys: [] }));
    expect(av.toString('hex')).to.equal('0000000c' + '00000005' + '0000' + '01' + '00000000' + '00');
  });

  it('frames a request and reads it back', () => {
    const w = new Writer();
    const frame = Buffer.concat(encodeRequestFrame(w, ApiKey.Metadata, 12, 3, 'cli', { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
    const r = new Reader(frame);
    expect(r.int32()).to.equal(frame.length - 4);
    const h = readRequestHeader(r);
    expect(h).to.deep.equal({ requestApiKey: 3, requestApiVersion: 12, correlationId: 3, clientId: 'cli' });
    expect(apiSpecs[ApiKey.Metadata].decodeRequest(r, 12).allowAutoTopicCreation).to.equal(false);
  });

  it('loads message modules lazily, on first use of an API', () => {
    const index = path.resolve(__dirname, '../../src/protocol/generated/index.js');
    const script = `
      const g = require(${JSON.stringify(index)});
      const loaded = () => Object.keys(require.cache).filter((f) => f.includes('generated')).map((f) => require('path').basename(f)).sort();
      const before = loaded();
      const { Writer } = require(${JSON.stringify(path.resolve(__dirname, '../../src/protocol/primitives.js'))});
      g.getApiSpec(3).encodeResponse(new Writer(), { brokers: [], topics: [] }, 1);
      console.log(JSON.stringify({ before, after: loaded() }));
    `;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { before: string[]; after: string[] };
    expect(out.before).to.deep.equal(['RequestHeader.js', 'ResponseHeader.js', 'index.js']);
    expect(out.after).to.deep.equal(['MetadataResponse.js', 'RequestHeader.js', 'ResponseHeader.js', 'index.js']);
  });
});
