import { expect } from 'chai';
import {
  INTERNAL_TOPICS,
  InvalidTopicError,
  assertValidTopicName,
  checkNewTopicName,
  findCollision,
  hasCollision,
  isInternalTopic,
  isValidTopicName,
  topicCollision,
  validateTopicName,
} from '../../src/cluster/topic-names';

describe('cluster/topic-names', () => {
  it('accepts legal names', () => {
    for (const n of ['a', 'A-b_c.d', '0', '...', 'x'.repeat(249), '__consumer_offsets']) {
      expect(validateTopicName(n), n).to.equal(null);
      expect(isValidTopicName(n)).to.equal(true);
    }
  });

  it("refuses illegal names with Kafka's messages", () => {
    expect(validateTopicName('')).to.equal('Topic name is invalid: the empty string is not allowed');
    expect(validateTopicName('.')).to.equal("Topic name is invalid: '.' is not allowed");
    expect(validateTopicName('..')).to.equal("Topic name is invalid: '..' is not allowed");
    const long = 'x'.repeat(250);
    expect(validateTopicName(long)).to.equal(`Topic name is invalid: the length of '${long}' is longer than the max allowed length 249`);
    expect(validateTopicName('a b')).to.equal(
      "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'");
    expect(validateTopicName('café')).to.match(/contains one or more characters other than/);
    expect(validateTopicName('a/b')).to.match(/contains one or more characters other than/);
    expect(() => assertValidTopicName('')).to.throw(InvalidTopicError, 'Topic name is invalid: the empty string is not allowed');
    try {
      assertValidTopicName('.');
    } catch (e) {
      expect((e as InvalidTopicError).errorCode).to.equal(17);
    }
  });

  it("finds '.' vs '_' collisions", () => {
    expect(hasCollision('a.b', 'a_b')).to.equal(true);
    expect(hasCollision('a.b', 'a-b')).to.equal(false);
    expect(findCollision('a.b', ['x', 'a_b'])).to.equal('a_b');
    expect(findCollision('a_b', ['a.b', 'a_b'])).to.equal('a.b'); // itself excluded
    expect(findCollision('ab', ['ab'])).to.equal(null);
    expect(findCollision('a.b_c', ['a_b.c', 'a.b.c'])).to.equal('a.b.c'); // least name: deterministic
    expect(topicCollision('a.b', new Set(['a_b']))).to.equal('a_b');
  });

  it('checks a new name in Kafka order: exists, illegal, collision', () => {
    const existing = new Set(['a_b', 'orders']);
    expect(checkNewTopicName('orders', existing)).to.deep.equal({
      errorCode: 36, errorName: 'TOPIC_ALREADY_EXISTS', message: "Topic 'orders' already exists.",
    });
    expect(checkNewTopicName('a.b', existing)).to.deep.equal({
      errorCode: 17, errorName: 'INVALID_TOPIC_EXCEPTION', message: "Topic 'a.b' collides with existing topic: a_b",
    });
    expect(checkNewTopicName('..', existing)).to.deep.include({ errorCode: 17 });
    expect(checkNewTopicName('fresh', existing)).to.equal(null);
    expect(checkNewTopicName('fresh', ['fresh'])).to.deep.include({ errorCode: 36 });
  });

  it('knows the internal topics', () => {
    expect([...INTERNAL_TOPICS].sort()).to.deep.equal(['__consumer_offsets', '__share_group_state', '__transaction_state']);
    expect(isInternalTopic('__consumer_offsets')).to.equal(true);
    expect(isInternalTopic('orders')).to.equal(false);
  });
});
