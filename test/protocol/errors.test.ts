import { expect } from 'chai';
import { ErrorCode, errorMessage, errorName, isKnownErrorCode } from '../../src/common/errors';

describe('protocol error codes', () => {
  it("match Kafka's numbering", () => {
    expect(ErrorCode.UNKNOWN_SERVER_ERROR).to.equal(-1);
    expect(ErrorCode.NONE).to.equal(0);
    expect(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).to.equal(3);
    expect(ErrorCode.NOT_LEADER_OR_FOLLOWER).to.equal(6);
    expect(ErrorCode.UNSUPPORTED_VERSION).to.equal(35);
    expect(ErrorCode.TOPIC_ALREADY_EXISTS).to.equal(36);
    expect(ErrorCode.INVALID_REQUEST).to.equal(42);
    expect(ErrorCode.PRODUCER_FENCED).to.equal(90);
    expect(ErrorCode.UNKNOWN_TOPIC_ID).to.equal(100);
    expect(ErrorCode.TRANSACTION_ABORTABLE).to.equal(120);
    expect(ErrorCode.SHARE_SESSION_LIMIT_REACHED).to.equal(133);
  });

  it('cover -1..133 without gaps or duplicates', () => {
    const codes = Object.values(ErrorCode) as number[];
    expect(new Set(codes).size).to.equal(codes.length);
    for (let c = -1; c <= 133; c++) expect(isKnownErrorCode(c), `code ${c}`).to.equal(true);
    expect(codes.length).to.equal(135);
  });

  it('names and messages', () => {
    expect(errorName(3)).to.equal('UNKNOWN_TOPIC_OR_PARTITION');
    expect(errorName(9999)).to.equal('UNKNOWN_ERROR_9999');
    expect(errorMessage(0)).to.equal('');
    expect(errorMessage(36)).to.equal('Topic with this name already exists.');
    expect(errorMessage(9999)).to.match(/Unknown error code 9999/);
    expect(isKnownErrorCode(9999)).to.equal(false);
  });
});
