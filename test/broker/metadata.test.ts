// Metadata requests that name topics by id or with a null name, at every version that carries them.
import { expect } from 'chai';
import { ApiKey } from '../../src/protocol/generated';
import type { MetadataResponse } from '../../src/protocol/generated/MetadataResponse';
import { ErrorCode } from '../../src/common/errors';
import { ZERO_UUID } from '../../src/protocol/primitives';
import { RawClient } from '../helpers/raw-client';
import { withBroker } from '../helpers/broker';

describe('Metadata by topic id', function () {
  const broker = withBroker({ config: { 'num.partitions': '2' } });
  const unknownId = '7'.repeat(32);

  async function metadata(version: number, topics: { name: string | null; topicId?: string }[]): Promise<MetadataResponse> {
    const c = await RawClient.connect(broker.current().port);
    try {
      return await c.request<MetadataResponse>(ApiKey.Metadata, version, { topics, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    } finally {
      c.close();
    }
  }

  it('serves Metadata up to v13 (its cases are v12\'s, with the top-level error code)', () => {
    expect(broker.current().broker.router.handler(ApiKey.Metadata)!.maxVersion).to.equal(13);
  });

  for (const version of [10, 11]) {
    it(`answers an unknown topic id with a null name at v${version} with INVALID_REQUEST and name "" (issue 11, item 1)`, async () => {
      const res = await metadata(version, [{ name: null, topicId: unknownId }]);
      expect(res.brokers).to.deep.equal([]);
      expect(res.topics).to.have.length(1);
      expect(res.topics[0]).to.include({ errorCode: ErrorCode.INVALID_REQUEST, name: '', topicId: unknownId });
      expect(res.topics[0].partitions).to.deep.equal([]);
    });

    it(`refuses a non-zero topic id next to a name at v${version}, every topic INVALID_REQUEST, nothing created`, async () => {
      const res = await metadata(version, [{ name: `by-name-v${version}` }, { name: `with-id-v${version}`, topicId: unknownId }]);
      expect(res.topics.map((t) => [t.name, t.errorCode])).to.deep.equal([
        [`by-name-v${version}`, ErrorCode.INVALID_REQUEST], [`with-id-v${version}`, ErrorCode.INVALID_REQUEST],
      ]);
      const all = await metadata(version, [{ name: `by-name-v${version}` }]);
      expect(all.topics[0].errorCode, 'a plain name is still served and auto-created').to.equal(ErrorCode.NONE);
      expect(broker.current().broker.controller.topic(`with-id-v${version}`)).to.equal(undefined);
    });

    it(`answers a null name with a zero id at v${version} with INVALID_REQUEST`, async () => {
      const res = await metadata(version, [{ name: null, topicId: ZERO_UUID }]);
      expect(res.topics[0]).to.include({ errorCode: ErrorCode.INVALID_REQUEST, name: '' });
    });
  }

  for (const version of [12, 13]) {
    it(`answers an unknown topic id at v${version} with UNKNOWN_TOPIC_ID and a null name, a known id with its topic`, async () => {
      const created = await metadata(version, [{ name: `id-known-v${version}` }]);
      const id = created.topics[0].topicId!;
      const res = await metadata(version, [{ name: null, topicId: unknownId }, { name: null, topicId: id }, { name: 'ignored-name', topicId: id }]);
      expect(res.topics[0]).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId: unknownId });
      expect(res.topics[1]).to.include({ errorCode: ErrorCode.NONE, name: `id-known-v${version}`, topicId: id });
      expect(res.topics[2]).to.include({ errorCode: ErrorCode.NONE, name: `id-known-v${version}`, topicId: id });
      expect(res.errorCode, 'the top-level error code (v13) is NONE').to.equal(ErrorCode.NONE);
      expect(broker.current().broker.controller.topic('ignored-name'), 'a name next to an id is not auto-created').to.equal(undefined);
    });

    it(`answers a null name with a zero id at v${version} with UNKNOWN_TOPIC_ID`, async () => {
      const res = await metadata(version, [{ name: null, topicId: ZERO_UUID }]);
      expect(res.topics[0]).to.include({ errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null });
    });
  }
});
