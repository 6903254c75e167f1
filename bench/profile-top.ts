// Top functions of a V8 .cpuprofile by self time and by total (inclusive) time, e.g. the broker
// profiles that `npm run bench -- --cpu-prof` writes to bench/results/profiles/.
//
//   node dist/bench/profile-top.js FILE.cpuprofile [--top 25] [--callers NAME]
//
// --callers NAME: the call stacks (6 frames up) through which the functions whose label contains NAME
// spend their self time, heaviest first.
//
// Open the same file in Chrome DevTools (Performance tab) or speedscope for the flame graph.
import * as fs from 'node:fs';
import * as path from 'node:path';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

function label(f: CallFrame): string {
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  let file = f.url.replace(/^file:\/\//, '');
  const i = file.lastIndexOf('/dist/');
  if (i >= 0) file = file.slice(i + 1);
  else if (file.includes('/node_modules/')) file = file.slice(file.lastIndexOf('/node_modules/') + 1);
  else file = path.basename(file);
  return `${name} ${file}:${f.lineNumber + 1}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const topIdx = args.indexOf('--top');
  const top = topIdx >= 0 ? parseInt(args[topIdx + 1], 10) : 25;
  const callersIdx = args.indexOf('--callers');
  const callers = callersIdx >= 0 ? args[callersIdx + 1] : undefined;
  const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--top' && args[i - 1] !== '--callers');
  if (!file) {
    console.error('usage: node dist/bench/profile-top.js FILE.cpuprofile [--top 25] [--callers NAME]');
    process.exit(2);
  }
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // time per sample: the delta to the next sample (V8 stores the delta before each sample)
  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + dt);
  }
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    self.set(label(n.callFrame), (self.get(label(n.callFrame)) ?? 0) + us);
    const seen = new Set<string>(); // count recursion once
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!.callFrame);
      if (seen.has(l)) continue;
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + us);
    }
  }
  const idle = self.get('(idle)') ?? 0;
  const busy = totalUs - idle;
  console.log(`${file}: ${(totalUs / 1e6).toFixed(2)} s sampled, main thread busy ${(busy / 1e6).toFixed(2)} s (${((100 * busy) / totalUs).toFixed(0)}%)`);
  const print = (title: string, m: Map<string, number>) => {
    console.log(`\n${title} (% of busy time)`);
    const rows = [...m.entries()].filter(([l]) => l !== '(idle)' && l !== '(root)').sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [l, us] of rows) console.log(`${((100 * us) / busy).toFixed(1).padStart(6)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${l}`);
  };
  if (callers) {
    const stacks = new Map<string, number>();
    for (const [id, us] of selfUs) {
      if (!label(byId.get(id)!.callFrame).includes(callers)) continue;
      const chain: string[] = [];
      for (let cur: number | undefined = id; cur !== undefined && chain.length < 7; cur = parent.get(cur)) chain.push(label(byId.get(cur)!.callFrame));
      const key = chain.join('\n      <- ');
      stacks.set(key, (stacks.get(key) ?? 0) + us);
    }
    print(`stacks of ${callers}`, stacks);
    return;
  }
  print('self time', self);
  print('total time', incl);
}

main();
