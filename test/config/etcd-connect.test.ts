import { expect } from 'chai';
import { BrokerConfig, ConfigError } from '../../src/config/broker-config';
import { parseEtcdConnect } from '../../src/config/etcd-connect';

describe('config/etcd-connect', () => {
  it('parses one or more HOST:PORT, with or without a chroot prefix', () => {
    expect(parseEtcdConnect('127.0.0.1:2379')).to.deep.equal({ endpoints: ['127.0.0.1:2379'], prefix: '' });
    expect(parseEtcdConnect('a:1, b.example:2379 ,[::1]:2380/fjord/prod')).to.deep.equal({
      endpoints: ['a:1', 'b.example:2379', '[::1]:2380'],
      prefix: '/fjord/prod',
    });
    expect(parseEtcdConnect('etcd:2379/')).to.deep.equal({ endpoints: ['etcd:2379'], prefix: '' });
  });

  it('refuses a missing port, a bad port, an empty entry and a malformed prefix, naming the key', () => {
    for (const [raw, why] of [
      ['etcd', /'etcd' is not HOST:PORT/],
      ['etcd:0', /port 0 of 'etcd:0' must be between 1 and 65535/],
      ['etcd:65536', /between 1 and 65535/],
      ['a:1,,b:2', /'' is not HOST:PORT/],
      ['a:1/fjord/', /prefix '\/fjord\/' must be/],
      ['a:1//x', /prefix/],
      ['a:1/f j', /prefix/],
    ] as const) {
      expect(() => parseEtcdConnect(raw), raw).to.throw(ConfigError, why).with.property('key', 'etcd.connect');
    }
  });

  it('is a broker config: empty by default (no cluster mode), parsed and validated when set', () => {
    const single = new BrokerConfig({});
    expect(single.getString('etcd.connect')).to.equal('');
    expect(single.etcdConnect).to.equal(null);
    expect(single.getInt('broker.session.timeout.ms')).to.equal(9000);

    const clustered = new BrokerConfig({ 'etcd.connect': 'e1:2379,e2:2379/fjord', 'broker.session.timeout.ms': '3000' });
    expect(clustered.etcdConnect).to.deep.equal({ endpoints: ['e1:2379', 'e2:2379'], prefix: '/fjord' });
    expect(clustered.getInt('broker.session.timeout.ms')).to.equal(3000);

    expect(() => new BrokerConfig({ 'etcd.connect': 'nope' })).to.throw(ConfigError, /etcd\.connect/);
    expect(() => new BrokerConfig({ 'broker.session.timeout.ms': '0' })).to.throw(ConfigError, /at least 1/);
  });
});
