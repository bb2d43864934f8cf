export interface StackHandle {
  neo4jUri: string;
  kafkaBrokers: string;
  startedByUs: string[];
  stop: () => Promise<void>;
}
export function ensureStack(o?: { log?: ((m: string) => void) | false }): Promise<StackHandle>;
export function stopStack(o?: { log?: ((m: string) => void) | false }): Promise<void>;
export function install(o?: { log?: ((m: string) => void) | false; force?: boolean }): Promise<void>;
export interface StackStatus {
  installed: boolean;
  versions?: { neo4j: string; kafka: string };
  services: Record<
    'neo4j' | 'kafka',
    {
      state: 'running' | 'starting/unhealthy' | 'external' | 'stopped';
      pid?: number;
      address: string;
      rss?: string;
      log: string;
    }
  >;
}
export function stackStatus(): Promise<StackStatus>;
export function restartService(
  name: 'neo4j' | 'kafka',
  o?: { log?: ((m: string) => void) | false; hard?: boolean; downMs?: number },
): Promise<void>;
/** A start's deadline so far and the newest recovery progress line of its service's log seen ('' for none). */
export interface RecoveryWait {
  deadline: number;
  last: string;
}
export function recoveryDeadline(
  wait: RecoveryWait,
  text: string,
  now: number,
  timeoutMs: number,
  service?: 'neo4j' | 'kafka',
): RecoveryWait & { note: string };
/** A JDK tool: JAVA_HOME's, else the one on PATH. */
export function javaBin(tool: string): string;
/** The classpath of Neo4j's jars (the server's, and neo4j-admin's AdminTool). */
export const NEO4J_JARS: string;
/** The JVM arguments of a Neo4j on `cfg.neo4jPort`: the stack's home and logs unless `where` names others. */
export function neo4jCommand(
  cfg: { neo4jPort: number; neo4jHeap: string },
  where?: { home?: string; logs?: string },
): string[];
