// ssl.principal.mapping.rules against Kafka's own SslPrincipalMapperTest cases: which rule lists
// parse, how they split, and the names they give.
import { expect } from 'chai';
import { SslPrincipalMapper } from '../../src/security/ssl-principal-mapper';
import { ConfigError } from '../../src/config/broker-config';

describe('SslPrincipalMapper (ssl.principal.mapping.rules)', () => {
  it('accepts the rules Kafka accepts', () => {
    for (const rules of [
      'DEFAULT',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT',
      'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/',
      'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L',
      'RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U',
      'RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/',
      'RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/',
    ]) expect(() => new SslPrincipalMapper(rules), rules).not.to.throw();
  });

  it('refuses the rules Kafka refuses, as a config error', () => {
    for (const rules of [
      'default', 'DEFAUL', 'DEFAULT/L', 'DEFAULT/U',
      'RULE:CN=(.*?),OU=ServiceUsers.*/$1', 'rule:^CN=(.*?),OU=ServiceUsers.*$/$1/',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U', 'RULE:^CN=(.*?),OU=ServiceUsers.*$/L',
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/U', 'RULE:^CN=(.*?),OU=ServiceUsers.*$/LU',
    ]) expect(() => new SslPrincipalMapper(rules), rules).to.throw(ConfigError, /Invalid rule/);
  });

  it('maps names as Kafka does: first rule that matches the whole name, then L or U', () => {
    const mapper = new SslPrincipalMapper([
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L',
      'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L',
      'RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U',
      'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U',
      'DEFAULT',
    ].join(', '));
    expect(mapper.getName('CN=Duke,OU=ServiceUsers,O=Org,C=US')).to.equal('duke');
    expect(mapper.getName('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US')).to.equal('duke@sme');
    expect(mapper.getName('cn=duke,ou=sme,dc=mycp,dc=com')).to.equal('DUKE@SME');
    expect(mapper.getName('cN=duke,OU=JavaSoft,O=Sun Microsystems')).to.equal('DUKE');
    expect(mapper.getName('OU=JavaSoft,O=Sun Microsystems,C=US')).to.equal('OU=JavaSoft,O=Sun Microsystems,C=US');
  });

  it('keeps an escaped comma in a name (Kafka\'s testCommaWithWhitespace)', () => {
    const mapper = new SslPrincipalMapper('RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT');
    expect(mapper.getName('CN=Tkac\\, Adam,OU=ITZ,DC=geodis,DC=cz')).to.equal('Tkac\\, Adam');
  });

  it('no rule applying gives no name (the connection is refused)', () => {
    expect(new SslPrincipalMapper('RULE:^CN=(.*)$/$1/').getName('O=acme')).to.equal(null);
  });

  it('splits rule lists as Kafka does (its toString cases)', () => {
    const cases: [string, string][] = [
      ['[]', ''],
      ['[DEFAULT]', 'DEFAULT'],
      ['[RULE:/]', 'RULE://'],
      ['[RULE:/.*]', 'RULE:/.*/'],
      ['[RULE:/.*/L]', 'RULE:/.*/L'],
      ['[RULE:/, DEFAULT]', 'RULE://,DEFAULT'],
      ['[RULE:/, DEFAULT]', '  RULE:// ,  DEFAULT  '],
      ['[RULE:   /     , DEFAULT]', '  RULE:   /     / ,  DEFAULT  '],
      ['[RULE:  /     /U, DEFAULT]', '  RULE:  /     /U   ,DEFAULT  '],
      ['[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]', '  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  '],
      ['[]', ',   , , ,      , , ,   '],
      ['[RULE:/, DEFAULT]', ',,RULE://,,,DEFAULT,,'],
      ['[RULE: /   , DEFAULT]', ',  , RULE: /   /    ,,,   DEFAULT, ,   '],
      ['[RULE:   /  /U, DEFAULT]', '     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,'],
      ['[RULE:\\/\\\\\\(\\)\\n\\t/\\/\\/]', 'RULE:\\/\\\\\\(\\)\\n\\t/\\/\\//'],
      ['[RULE:\\**\\/+/*/L, RULE:\\/*\\**/**]', 'RULE:\\**\\/+/*/L,RULE:\\/*\\**/**/'],
    ];
    for (const [expected, rules] of cases) {
      expect(new SslPrincipalMapper(rules).toString(), rules).to.equal(`SslPrincipalMapper(rules = ${expected})`);
    }
  });
});
