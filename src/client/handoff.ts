import { MuninnError } from '../domain/errors.ts';
import type { CuratorDeps, EpisodeDraft, HandoffPort, IngestReceipt } from '../handoff/curator.ts';
import type { Logger } from '../ports/logger.ts';
import { callGraphQL } from './graphql.ts';
import type { TokenSource } from './token-command.ts';

/**
 * The curator as a client, on the Heimdall side of the handoff: the contract over HTTP at /handoff (one fresh
 * handoff token per call: the contract refuses a replayed `jti`), and Muninn's main API for the drafts
 * (`ingestEpisode` with `await: true`, under the curator's own token). Every refusal arrives as a
 * MuninnError with the server's code and safe details (a CONFLICT's `reason`), so the curator fails before
 * committing exactly as it does in-process. Tokens are never logged nor put in an error.
 */
export interface CuratorClientOptions {
  /** The /handoff URL of `muninn handoff serve`. */
  readonly handoffUrl: string;
  readonly handoffToken: TokenSource;
  /** The main API's /graphql URL. */
  readonly apiUrl: string;
  readonly apiToken: TokenSource;
  readonly holder: string;
  readonly namespace: string;
  readonly logger: Logger;
  readonly leaseTtlMs?: number;
  /** Per call; an awaited ingest waits for the projection (MUNINN_AWAIT_TIMEOUT_MS on the server). */
  readonly timeoutMs?: number;
}

const CHECKPOINT = `query Checkpoint { checkpoint { seq } }`;
const MANIFESTS = `query Manifests($after: Int, $first: Int) {
  manifests(after: $after, first: $first) { items { seq hash objects } } }`;
const WINDOW = `query Window($objectId: ID!) { window(objectId: $objectId) { content } }`;
const ACQUIRE = `mutation AcquireLease($seq: Int!, $holder: String!, $ttlMs: Int) {
  acquireLease(seq: $seq, holder: $holder, ttlMs: $ttlMs) { leaseId } }`;
const RENEW = `mutation RenewLease($leaseId: ID!, $holder: String!, $ttlMs: Int) {
  renewLease(leaseId: $leaseId, holder: $holder, ttlMs: $ttlMs) { leaseId } }`;
const COMMIT = `mutation CommitCheckpoint($seq: Int!, $manifestHash: String!, $leaseId: ID!) {
  commitCheckpoint(seq: $seq, manifestHash: $manifestHash, leaseId: $leaseId) { seq repeated } }`;
const INGEST = `mutation IngestEpisode($input: EpisodeInput!) {
  ingestEpisode(input: $input) { outcome recordId } }`;

type Vars = Readonly<Record<string, unknown>>;

/** One operation; its single root field's value, or the first error as a MuninnError. */
async function call<T>(
  url: string,
  token: TokenSource,
  document: string,
  operationName: string,
  variables: Vars,
  timeoutMs: number | undefined,
): Promise<T> {
  const out = await callGraphQL({
    url,
    token: await token(),
    document,
    operationName,
    variables,
    ...(timeoutMs ? { timeoutMs } : {}),
  });
  if (!out.ok) {
    const e = out.errors[0]!;
    throw new MuninnError(e.code, `${operationName}: ${e.message}`, e.details ?? {});
  }
  return Object.values(out.data)[0] as T;
}

/** HandoffPort over GraphQL: the same operations, the same refusals, as the HandoffService. */
export function handoffClient(url: string, token: TokenSource, timeoutMs?: number): HandoffPort {
  const q = <T>(doc: string, op: string, vars: Vars = {}) => call<T>(url, token, doc, op, vars, timeoutMs);
  const defined = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return {
    checkpoint: () => q(CHECKPOINT, 'Checkpoint'),
    manifests: (input) => q(MANIFESTS, 'Manifests', defined(input)),
    window: (objectId) => q(WINDOW, 'Window', { objectId }),
    acquireLease: (input) => q(ACQUIRE, 'AcquireLease', defined(input)),
    renewLease: (input) => q(RENEW, 'RenewLease', defined(input)),
    commit: (input) => q(COMMIT, 'CommitCheckpoint', input),
  };
}

/** The curator's drafts through the main API: review (CANDIDATE) drafts, awaited until projected. */
export function apiIngest(
  url: string,
  token: TokenSource,
  timeoutMs?: number,
): (episode: EpisodeDraft) => Promise<readonly IngestReceipt[]> {
  return (episode) =>
    call<IngestReceipt[]>(
      url,
      token,
      INGEST,
      'IngestEpisode',
      { input: { ...episode, await: true } },
      timeoutMs,
    );
}

/** The curator's dependencies over HTTP (what `muninn curate` runs). */
export function httpCuratorDeps(o: CuratorClientOptions): CuratorDeps {
  return {
    handoff: handoffClient(o.handoffUrl, o.handoffToken, o.timeoutMs),
    ingest: apiIngest(o.apiUrl, o.apiToken, o.timeoutMs),
    holder: o.holder,
    namespace: o.namespace,
    logger: o.logger,
    ...(o.leaseTtlMs ? { leaseTtlMs: o.leaseTtlMs } : {}),
  };
}
