// CPU and peak memory of a live process (a broker under load), from /proc.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

export interface ProcStats {
  /** utime + stime of every thread, seconds. */
  cpuSeconds: number;
  /** VmHWM: peak resident set, MiB. */
  peakRssMb: number;
}

const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** utime + stime, seconds, from a /proc stat file (a process's: all its threads; a task's: that thread). */
function cpuSecondsOf(statFile: string): number {
  const stat = fs.readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // fields 14 and 15
}

/** CPU time of a process's main thread (Node's event loop), seconds. */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(`/proc/${pid}/task/${pid}/stat`);
}

/** The pids of this process's children named `comm` (/proc/PID/stat: the name is field 2, the parent field 4). */
export function childPids(comm: string): number[] {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      return name === comm && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
    } catch {
      return false; // exited meanwhile
    }
  });
}

/** CPU and peak memory of a live process, from /proc. */
export function procStats(pid: number): ProcStats {
  const cpuSeconds = cpuSecondsOf(`/proc/${pid}/stat`);
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwmKb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return { cpuSeconds, peakRssMb: hwmKb / 1024 };
}
