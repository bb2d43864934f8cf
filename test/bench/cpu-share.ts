import { readFileSync } from 'node:fs';
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
 * seconds. What bounds a rate on a 2-core machine.
 */
export function cpuShare(root: string, others: Readonly<Record<string, number>> = {}): () => string {
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
  return () => {
    const wall = (performance.now() - start.wall) / 1000;
    const self = process.cpuUsage(start.self);
    const parts = [`this process ${((self.user + self.system) / 1e6 / wall).toFixed(2)}`];
    for (const [name, pid] of Object.entries(pids)) {
      const now = cpuSecondsOf(pid);
      const before = jvm0[name];
      if (now !== null && before !== null && before !== undefined)
        parts.push(`${name} ${((now - before) / wall).toFixed(2)}`);
    }
    return `cores used: ${parts.join(', ')}`;
  };
}
