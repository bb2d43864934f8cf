export const MODEL_DIR: string;
export function ensureModel(o?: {
  log?: ((m: string) => void) | false;
  dir?: string;
  checkOnly?: boolean;
}): Promise<string>;
