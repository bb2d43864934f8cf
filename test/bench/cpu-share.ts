import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

/** The pid of a server scripts/stack.mjs started (its pid file in .stack/run), if any. */
function stackPid(root: string, name: string): number | null {
  try {
    return Number(readFileSync(join(root, '.stack/run', `${name}.pid`), 'utf8').trim());
  } catch {
    return null;
  }
}

/** A process's CPU seconds so far: utime and stime, fields 14 and 15 of /proc/<pid>/stat (100 ticks a s). */
function cpuSecondsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** CPU seconds the stack's `name` server (neo4j, kafka) has used so far; null when it is not the stack's. */
export function stackCpuSeconds(root: string, name: string): () => number | null {
  const pid = stackPid(root, name);
  return () => (pid === null ? null : cpuSecondsOf(pid));
}

/**
 * Where a phase's CPU went: this process (API, projector and the bench's client, worker threads included)
 * and, when scripts/stack.mjs started them, the Neo4j and Kafka JVMs (their pid files in .stack/run, their
 * CPU from /proc), and any `others` named by pid (a child server). In cores: CPU seconds over wall
 * seconds. What bounds a rate on a 2-core machine. Given what the phase did (`per`: how many, of what),
 * also each process's CPU milliseconds per item: steadier than a rate from one short run, so a change
 * that saves CPU shows even where the rate stays within the noise.
 */
export function cpuShare(
  root: string,
  others: Readonly<Record<string, number>> = {},
): (per?: { count: number; what: string }) => string {
  const pids = {
    ...others,
    ...Object.fromEntries(
      ['neo4j', 'kafka'].flatMap((name) => {
        const pid = stackPid(root, name);
        return pid === null ? [] : [[name, pid]];
      }),
    ),
  };
  const start = { wall: performance.now(), self: process.cpuUsage() };
  const jvm0 = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuSecondsOf(pid)]));
  return (per) => {
    const wall = (performance.now() - start.wall) / 1000;
    const self = process.cpuUsage(start.self);
    const used: Array<[string, number]> = [['this process', (self.user + self.system) / 1e6]];
    for (const [name, pid] of Object.entries(pids)) {
      const now = cpuSecondsOf(pid);
      const before = jvm0[name];
      if (now !== null && before !== null && before !== undefined) used.push([name, now - before]);
    }
    const cores = `cores used (of ${cpus().length}): ${used.map(([n, s]) => `${n} ${(s / wall).toFixed(2)}`).join(', ')}`;
    if (!per || per.count <= 0) return cores;
    const each = used.map(([n, s]) => `${n} ${((1000 * s) / per.count).toFixed(2)}`).join(', ');
    return `${cores}; CPU ms per ${per.what}: ${each}`;
  };
}
