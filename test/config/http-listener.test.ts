// The http.listener value: HOST:PORT, [IPv6]:PORT, :PORT (every interface) or empty (no listener).
import { expect } from 'chai';
import { parseHttpListener } from '../../src/config/http-listener';

describe('parseHttpListener', () => {
  it('parses the forms a listener is given in', () => {
    expect(parseHttpListener('127.0.0.1:8080')).to.deep.equal({ host: '127.0.0.1', port: 8080 });
    expect(parseHttpListener(' localhost:0 ')).to.deep.equal({ host: 'localhost', port: 0 });
    expect(parseHttpListener('[::1]:8080')).to.deep.equal({ host: '::1', port: 8080 });
    expect(parseHttpListener(':8080')).to.deep.equal({ host: '', port: 8080 });
  });

  it('reads empty as no listener', () => {
    expect(parseHttpListener('')).to.equal(null);
    expect(parseHttpListener('  ')).to.equal(null);
  });

  it('refuses what is not HOST:PORT, saying why', () => {
    for (const bad of ['8080', 'localhost', 'a:b', '::1:8080', 'host:', 'http://host:8080']) {
      expect(() => parseHttpListener(bad), bad).to.throw('Expected HOST:PORT');
    }
    expect(() => parseHttpListener('host:65536')).to.throw('Port 65536 is out of range');
  });
});
