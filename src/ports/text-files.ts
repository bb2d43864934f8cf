/**
 * Text files by path: all a use case does with the file system (eval runs, the harness file `muninn project`
 * writes, the handoff's observation state and session fixtures). The adapter is src/adapters/files.
 */
export interface TextFiles {
  /** The file's text; undefined when there is no such file. */
  read(path: string): Promise<string | undefined>;
  /**
   * Replaces the file so that a reader sees the old text or the new, never a partial one, and a crash keeps
   * one of them; creates its directory first (`dirMode` for it, `fileMode` for the file).
   */
  write(
    path: string,
    text: string,
    modes?: { readonly fileMode?: number; readonly dirMode?: number },
  ): Promise<void>;
  /** The names in a directory, sorted; undefined when there is no such directory. */
  list(dir: string): Promise<string[] | undefined>;
}
