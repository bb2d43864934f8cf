import { fileURLToPath } from 'node:url';
import { callGraphQL, type GraphQLOutcome } from '../client/graphql.ts';
import { MuninnError } from '../domain/errors.ts';
import type { TextFiles } from '../ports/text-files.ts';
import { spliceBlock } from './fence.ts';
import type { DeliveryProfile } from './profiles.ts';
import { instructionsOf, renderBlock, type ContextPack, type PackRecord } from './render.ts';

/**
 * `muninn project agents-md`: read the standing rules of a namespace through the API with the user's own
 * token, render them through a delivery profile and put the block into the harness file. Nothing is
 * written when the bytes would not change, so a second run leaves the file (and its mtime) alone.
 */
export interface ProjectOptions {
  readonly graphqlUrl: string;
  readonly token: string;
  readonly namespace: string;
  readonly profile: DeliveryProfile;
  readonly file: string;
  /** For profiles that carry memory: a recall for this task is appended as reference data. */
  readonly query?: string;
  readonly purpose?: string;
  readonly force?: boolean;
  /** Report whether the file would change; write nothing. */
  readonly check?: boolean;
  readonly now?: () => Date;
  /** Reads the harness file and the query document, writes the file. */
  readonly files: TextFiles;
}

export interface ProjectOutcome {
  readonly file: string;
  readonly changed: boolean;
  readonly rules: number;
}

const INSTRUCTIONS_FILE = fileURLToPath(new URL('./instructions.graphql', import.meta.url));
const RECALL = `query memory($query: String!, $namespace: String!, $purpose: String!) {
  recall(input: { query: $query, namespace: $namespace, purpose: $purpose,
    classes: [FACT, PREFERENCE, DECISION, CONSTRAINT, PROCEDURE, EVENT, OBSERVATION] }) { envelope } }`;
const MAX_PAGES = 100;

export async function projectFile(o: ProjectOptions): Promise<ProjectOutcome> {
  const pack: ContextPack = {
    namespace: o.namespace,
    records: await standingRules(o),
    ...(o.profile.memory && o.query ? { envelope: await memory(o, o.query) } : {}),
  };
  const existing = await o.files.read(o.file);
  const { text, changed } = spliceBlock(o.profile, existing, renderBlock(o.profile, pack), {
    force: o.force ?? false,
  });
  if (changed && !o.check) {
    await o.files.write(o.file, text);
  }
  return { file: o.file, changed, rules: instructionsOf(pack).length };
}

/** Every ACTIVE NORMATIVE record under the namespace's root, valid now (instructionsOf picks the chain). */
async function standingRules(o: ProjectOptions): Promise<PackRecord[]> {
  const root = o.namespace.split('/')[0]!;
  const validAt = (o.now?.() ?? new Date()).toISOString();
  const out: PackRecord[] = [];
  const document = await o.files.read(INSTRUCTIONS_FILE);
  if (document === undefined) throw new Error(`missing ${INSTRUCTIONS_FILE}`);
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const data = ok(
      await callGraphQL({
        url: o.graphqlUrl,
        token: o.token,
        document,
        operationName: 'instructions',
        variables: { namespace: root, validAt, ...(after ? { after } : {}) },
      }),
    );
    const records = data['records'] as {
      pageInfo: { endCursor: string | null; hasNextPage: boolean };
      nodes: Array<Omit<PackRecord, 'text'> & { statement: { text: string } }>;
    };
    for (const { statement, ...r } of records.nodes) out.push({ ...r, text: statement.text });
    if (!records.pageInfo.hasNextPage) return out;
    after = records.pageInfo.endCursor;
  }
  throw new MuninnError(
    'BAD_USER_INPUT',
    `more than ${MAX_PAGES * 200} standing rules; narrow the namespace`,
  );
}

async function memory(o: ProjectOptions, query: string): Promise<string> {
  const data = ok(
    await callGraphQL({
      url: o.graphqlUrl,
      token: o.token,
      document: RECALL,
      operationName: 'memory',
      variables: { query, namespace: o.namespace, purpose: o.purpose ?? 'delivery' },
    }),
  );
  return (data['recall'] as { envelope: string }).envelope;
}

function ok(r: GraphQLOutcome): Record<string, unknown> {
  if (r.ok) return r.data;
  const e = r.errors[0]!;
  throw new MuninnError(e.code, e.message);
}
