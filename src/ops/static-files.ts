/**
 * The web console's static files: the top-level `console/` folder of the package as it is, and
 * uPlot's built files (node_modules/uplot/dist) under /vendor/. Nothing outside those two folders
 * is ever served, whatever the path says.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import * as path from 'node:path';

export interface StaticFile {
  body: Buffer;
  contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
};

/** The package's console/ folder: dist/src/ops/ when compiled, src/ops/ from the sources. */
function consoleRoot(): string {
  const candidates = ['../../../console', '../../console'].map((rel) => path.resolve(__dirname, rel));
  return candidates.find((dir) => existsSync(path.join(dir, 'README.md'))) ?? candidates[0];
}

function uplotRoot(): string {
  return path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');
}

export class StaticFiles {
  private readonly consoleDir = consoleRoot();
  private readonly vendorDir = uplotRoot();

  /** The file at a URL path (`/` is index.html; `/vendor/uplot.esm.js` is uPlot's, in any case), or null. */
  async get(urlPath: string): Promise<StaticFile | null> {
    let segments: string[];
    try {
      segments = urlPath.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      return null; // a malformed %-escape names no file
    }
    if (segments.some((s) => s === '..' || s.includes('/') || s.includes('\\') || s.includes('\0'))) return null;
    if (segments.length === 0) segments = ['index.html'];
    if (segments[0] === 'vendor') return segments.length === 2 ? this.vendorFile(segments[1]) : null;
    return this.read(this.consoleDir, segments);
  }

  /** uPlot's file names are camel-cased (uPlot.esm.js); a page may ask for them in lower case. */
  private async vendorFile(name: string): Promise<StaticFile | null> {
    const lower = name.toLowerCase();
    const known = ['uPlot.esm.js', 'uPlot.iife.js', 'uPlot.iife.min.js', 'uPlot.min.css'].find((f) => f.toLowerCase() === lower);
    return known ? this.read(this.vendorDir, [known]) : null;
  }

  private async read(root: string, segments: string[]): Promise<StaticFile | null> {
    const file = path.resolve(root, ...segments);
    if (!file.startsWith(root + path.sep)) return null;
    try {
      if (!(await stat(file)).isFile()) return null;
      return { body: await readFile(file), contentType: CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream' };
    } catch {
      return null;
    }
  }
}
