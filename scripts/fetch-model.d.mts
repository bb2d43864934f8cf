export type LocalModel = 'all-MiniLM-L6-v2' | 'bge-small-en-v1.5';
export const DEFAULT_MODEL: 'bge-small-en-v1.5';
export const MINILM: 'all-MiniLM-L6-v2';
export const MODEL_NAMES: LocalModel[];
export const MODEL_DIR: string;
export function modelDirOf(model: string): string;
export function modelFromEnv(env?: Record<string, string | undefined>): LocalModel;
export function ensureModel(o?: {
  log?: ((m: string) => void) | false;
  dir?: string;
  checkOnly?: boolean;
  model?: LocalModel;
}): Promise<string>;
