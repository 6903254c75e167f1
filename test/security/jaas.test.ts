// The JAAS configuration parser, against the forms Kafka's JaasConfig (java.io.StreamTokenizer) accepts.
import { expect } from 'chai';
import { parseJaasConfig, parseJaasConfigProperty } from '../../src/security/jaas';
import { plainUsers } from '../../src/security/plain';

describe('JAAS config parser', () => {
  it('reads a PlainLoginModule with quoted options and user_ entries', () => {
    const m = parseJaasConfigProperty(
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";');
    expect(m.loginModule).to.equal('org.apache.kafka.common.security.plain.PlainLoginModule');
    expect(m.controlFlag).to.equal('required');
    expect(m.options.get('username')).to.equal('admin');
    expect(Object.fromEntries(plainUsers(m))).to.deep.equal({ admin: 'admin-secret', alice: 'alice-secret' });
  });

  it('takes escapes, single quotes, bare words, comments, any case of flag, and whitespace across lines', () => {
    const m = parseJaasConfigProperty(`
      // a comment
      com.example.Module Optional /* inline */ a="x\\"y\\\\z\\n" b='semi;colon' c=plain-word_1.2 d="\\101\\t"
        e="";`);
    expect(m.controlFlag).to.equal('optional');
    expect(m.options.get('a')).to.equal('x"y\\z\n');
    expect(m.options.get('b')).to.equal('semi;colon');
    expect(m.options.get('c')).to.equal('plain-word_1.2');
    expect(m.options.get('d')).to.equal('A\t');
    expect(m.options.get('e')).to.equal('');
  });

  it('reads several modules, and the property form insists on exactly one', () => {
    expect(parseJaasConfig('a.B required; c.D sufficient x="1";').map((m) => m.loginModule)).to.deep.equal(['a.B', 'c.D']);
    expect(() => parseJaasConfigProperty('a.B required; c.D sufficient;')).to.throw(/contains 2 login modules, should be 1 module/);
    expect(() => parseJaasConfigProperty('  ')).to.throw(/does not contain any login modules/);
  });

  it('refuses what Kafka refuses, with its messages', () => {
    expect(() => parseJaasConfig('a.B required x="1"')).to.throw('JAAS config entry not terminated by semi-colon');
    expect(() => parseJaasConfig('a.B mandatory;')).to.throw("Invalid login module control flag 'mandatory' in JAAS config");
    expect(() => parseJaasConfig('a.B;')).to.throw(/control flag not specified/);
    expect(() => parseJaasConfig('a.B required x;')).to.throw("Value not specified for key 'x' in JAAS config");
    expect(() => parseJaasConfig('a.B required x=;')).to.throw("Value not specified for key 'x' in JAAS config");
  });
});
