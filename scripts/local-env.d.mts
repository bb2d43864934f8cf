import type { StackHandle } from './stack.d.mts';
export function ensureLocalEnv(): Promise<StackHandle | undefined>;
