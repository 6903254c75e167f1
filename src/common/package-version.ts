// Fjord's own version, from its package.json: what the CLI prints and what the broker tells other
// brokers in ApiVersions (client_software_version).
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The version in Fjord's package.json; 'unknown' (Kafka's word for it) when it cannot be read. */
export function packageVersion(): string {
  // Compiled: dist/src/common/; from the sources: src/common/.
  for (const rel of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, rel), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'fjord' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return 'unknown';
}
