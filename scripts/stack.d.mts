export interface StackHandle {
  neo4jUri: string;
  kafkaBrokers: string;
  startedByUs: string[];
  stop: () => Promise<void>;
}
export function ensureStack(o?: { log?: ((m: string) => void) | false }): Promise<StackHandle>;
export function stopStack(o?: { log?: ((m: string) => void) | false }): Promise<void>;
export function install(o?: { log?: ((m: string) => void) | false; force?: boolean }): Promise<void>;
