// The soak's workload (issue #15): a few closed-loop callers of one tenant, each an agent that proposes
// (awaited or not), revises and retracts its own records, recalls and reads records, through GraphQL over
// HTTP; plus one graphql-ws subscription. Every answer is classified: ok, expected-retryable (a refusal
// the API marks `retryable` — RATE_LIMITED from the overload guard or a write budget, UNAVAILABLE — which
// the caller waits out for `retryAfterMs` and retries with the same idempotency key), or unexpected.
import { randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { gql, PROPOSE, RETRACT, REVISE, type GqlResult } from '../support/harness.ts';
import { benchQuery, prng, randomLeaf, syntheticRecord, type Layout } from './seed-records.ts';
import type { RecordClass } from '../../src/domain/model.ts';

export const OP_KINDS = ['propose', 'proposeAwait', 'revise', 'retract', 'recall', 'record'] as const;
export type OpKind = (typeof OP_KINDS)[number];

/** Weights of the mix: writes are ~2/3 of the calls, a third of those revise or retract. */
export const DEFAULT_MIX: Readonly<Record<OpKind, number>> = {
  propose: 30,
  proposeAwait: 20,
  revise: 12,
  retract: 5,
  recall: 20,
  record: 13,
};

export interface OpStats {
  ok: number;
  retryable: number;
  unexpected: number;
  /** Latency of each ok answer (the attempt that succeeded), ms. */
  readonly ms: number[];
  /** Write outcomes (ADMITTED, PENDING, REVISED …) as answered. */
  readonly outcomes: Map<string, number>;
}

export interface LoadTally {
  readonly ops: Record<OpKind, OpStats>;
  /** Retryable refusals by code (RATE_LIMITED, UNAVAILABLE). */
  readonly retryCodes: Map<string, number>;
  /** The first few unexpected answers, described (ids and codes only). */
  readonly unexpected: string[];
  subscriptionEvents: number;
  subscriptionErrors: number;
}

export const newTally = (): LoadTally => ({
  ops: Object.fromEntries(
    OP_KINDS.map((k) => [k, { ok: 0, retryable: 0, unexpected: 0, ms: [], outcomes: new Map() }]),
  ) as unknown as Record<OpKind, OpStats>,
  retryCodes: new Map(),
  unexpected: [],
  subscriptionEvents: 0,
  subscriptionErrors: 0,
});

export type Answer<T> =
  | { readonly kind: 'ok'; readonly data: T }
  | { readonly kind: 'retryable'; readonly code: string; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'unexpected'; readonly detail: string };

/**
 * One answer's class. Retryable only when every error carries `extensions.retryable: true` (the API's
 * one error map sets it for RATE_LIMITED and UNAVAILABLE); an answer without data, or with any other
 * error, is unexpected.
 */
export function classifyAnswer<T>(res: GqlResult<T>): Answer<T> {
  const errors = res.errors ?? [];
  if (errors.length === 0 && res.data) return { kind: 'ok', data: res.data };
  if (errors.length > 0 && errors.every((e) => e.extensions?.['retryable'] === true)) {
    const after = errors.map((e) => Number(e.extensions?.['retryAfterMs'])).find(Number.isFinite);
    return { kind: 'retryable', code: String(errors[0]!.extensions?.['code']), retryAfterMs: after };
  }
  const codes = errors.map((e) => String(e.extensions?.['code'] ?? 'none'));
  return { kind: 'unexpected', detail: `HTTP ${res.status}, ${codes.join(',') || 'no data and no errors'}` };
}

const UNEXPECTED_KEPT = 20;
const MAX_ATTEMPTS = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

function noteUnexpected(tally: LoadTally, what: string): void {
  if (tally.unexpected.length < UNEXPECTED_KEPT) tally.unexpected.push(what);
}

export interface LoadOptions {
  readonly url: string;
  /** One bearer token per caller (each caller is its own writer). */
  readonly tokens: readonly string[];
  /** The namespace root the soak writes under and recalls in. */
  readonly root: string;
  /** Stop starting calls at this `performance.now()`. */
  readonly until: number;
  /** Mean pause between one caller's calls (uniform in [0, 2×]), ms. */
  readonly thinkMs: number;
  readonly mix?: Readonly<Record<OpKind, number>>;
  readonly timeoutMs?: number;
  readonly seed?: number;
}

interface Owned {
  readonly id: string;
  version: number;
}

const CLASSES: readonly RecordClass[] = ['FACT', 'OBSERVATION', 'EVENT', 'PROCEDURE', 'CONSTRAINT'];
type Receipt = { outcome: string; recordId: string | null; version: number | null };

/** Outcomes a write may not have in this workload: each caller only changes live records it owns. */
const UNEXPECTED_OUTCOMES = new Set(['REJECTED', 'CONFLICT']);

/** One caller: its own records (live ones it may revise or retract, recent ones it reads), its own rng. */
class Caller {
  private readonly live: Owned[] = [];
  private readonly recent: string[] = [];
  private readonly rng: () => number;
  private readonly layout: Layout;
  private n = 0;

  constructor(
    private readonly o: LoadOptions,
    private readonly tally: LoadTally,
    private readonly index: number,
  ) {
    this.rng = prng((o.seed ?? 0x50a4) + index * 7919);
    this.layout = { root: o.root, tribes: 2, teams: 2, services: 2 };
  }

  async run(): Promise<void> {
    const mix = Object.entries(this.o.mix ?? DEFAULT_MIX) as Array<[OpKind, number]>;
    const total = mix.reduce((s, [, w]) => s + w, 0);
    while (performance.now() < this.o.until) {
      let x = this.rng() * total;
      const kind = mix.find(([, w]) => (x -= w) < 0)?.[0] ?? 'recall';
      await this.op(kind);
      await sleep(this.rng() * 2 * this.o.thinkMs);
    }
  }

  private async op(kind: OpKind): Promise<void> {
    if ((kind === 'revise' || kind === 'retract') && this.live.length === 0) kind = 'proposeAwait';
    if (kind === 'record' && this.recent.length === 0) kind = 'recall';
    switch (kind) {
      case 'propose':
      case 'proposeAwait':
        return this.propose(kind);
      case 'revise':
        return this.revise();
      case 'retract':
        return this.retract();
      case 'recall':
        await this.call(kind, RECALL, {
          input: { query: benchQuery(this.rng), namespace: this.o.root, purpose: 'soak', limit: 10 },
        });
        return;
      case 'record':
        await this.call(kind, RECORD, { id: this.recent[Math.floor(this.rng() * this.recent.length)] });
    }
  }

  private async propose(kind: 'propose' | 'proposeAwait'): Promise<void> {
    const cls = CLASSES[Math.floor(this.rng() * CLASSES.length)]!;
    const r = syntheticRecord(this.rng, randomLeaf(this.rng, this.layout), cls, `c${this.index}n${this.n++}`);
    const input = {
      namespace: r.namespace,
      class: r.class,
      statement: r.statement,
      ...(r.about ? { about: [{ alias: r.service, type: 'service' }] } : {}),
      purpose: 'soak',
      idempotencyKey: randomUUID(),
      await: kind === 'proposeAwait',
    };
    const rc = await this.write(kind, PROPOSE, 'propose', input);
    if (!rc?.recordId) return;
    this.remember(rc.recordId);
    if (rc.outcome === 'ADMITTED' && rc.version !== null)
      this.live.push({ id: rc.recordId, version: rc.version });
  }

  private async revise(): Promise<void> {
    const own = this.live[Math.floor(this.rng() * this.live.length)]!;
    const r = syntheticRecord(this.rng, this.o.root, 'FACT', `c${this.index}r${this.n++}`);
    const rc = await this.write('revise', REVISE, 'revise', {
      id: own.id,
      expectedVersion: own.version,
      statement: r.statement,
      purpose: 'soak',
      idempotencyKey: randomUUID(),
      await: true,
    });
    // REVISED: its new version. Anything else (PENDING: not projected within the await timeout; a
    // refusal): the version is not known for sure, so the caller stops changing that record.
    if (rc?.outcome === 'REVISED' && rc.version !== null) own.version = rc.version;
    else this.live.splice(this.live.indexOf(own), 1);
  }

  private async retract(): Promise<void> {
    const own = this.live.splice(Math.floor(this.rng() * this.live.length), 1)[0]!;
    await this.write('retract', RETRACT, 'retract', {
      id: own.id,
      expectedVersion: own.version,
      reason: 'soak: no longer true',
      idempotencyKey: randomUUID(),
      await: true,
    });
  }

  private remember(id: string): void {
    this.recent.push(id);
    if (this.recent.length > 200) this.recent.shift();
  }

  private async write(
    kind: OpKind,
    query: string,
    field: string,
    input: object,
  ): Promise<Receipt | undefined> {
    const data = await this.call<Record<string, Receipt>>(kind, query, { input });
    const rc = data?.[field];
    if (!rc) return undefined;
    bump(this.tally.ops[kind].outcomes, rc.outcome);
    if (UNEXPECTED_OUTCOMES.has(rc.outcome)) {
      this.tally.ops[kind].unexpected++;
      noteUnexpected(this.tally, `${kind}: outcome ${rc.outcome} (record ${rc.recordId ?? '-'})`);
    }
    return rc;
  }

  /** One call, retried with the same variables while the answer is a retryable refusal. */
  private async call<T>(
    kind: OpKind,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<T | undefined> {
    const s = this.tally.ops[kind];
    const token = this.o.tokens[this.index]!;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const t0 = performance.now();
      const a = await gql<T>(this.o.url, token, query, variables, this.o.timeoutMs ?? 120_000).then(
        (res) => classifyAnswer(res),
        (e: unknown): Answer<T> => ({ kind: 'unexpected', detail: `no answer: ${(e as Error).name}` }),
      );
      if (a.kind === 'ok') {
        s.ok++;
        s.ms.push(performance.now() - t0);
        return a.data;
      }
      if (a.kind === 'unexpected') {
        s.unexpected++;
        noteUnexpected(this.tally, `${kind}: ${a.detail}`);
        return undefined;
      }
      s.retryable++;
      bump(this.tally.retryCodes, a.code);
      await sleep(Math.min(5_000, Math.max(50, a.retryAfterMs ?? 250)));
    }
    s.unexpected++;
    noteUnexpected(this.tally, `${kind}: still refused after ${MAX_ATTEMPTS} attempts`);
    return undefined;
  }
}

const RECALL = `query R($input: RecallInput!) { recall(input: $input) { recallId tokens items { handle record { id } } } }`;
const RECORD = `query G($id: ID!) { record(id: $id, purpose: "soak") { id version status } }`;
const LAG = `subscription { projectionLag(intervalMs: 1000) { healthy totalLag } }`;

/** Runs `tokens.length` callers until `until`; every answer lands in `tally`. */
export async function runLoad(o: LoadOptions, tally: LoadTally): Promise<void> {
  await Promise.all(o.tokens.map((_, i) => new Caller(o, tally, i).run()));
}

/**
 * One graphql-ws subscription to `projectionLag` for the whole run (a dashboard's connection): each event
 * is counted; an error or an early completion is unexpected.
 */
export function subscribeLag(url: string, token: string, tally: LoadTally): () => Promise<void> {
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  let stopping = false;
  const unsubscribe = client.subscribe(
    { query: LAG },
    {
      next: (v) => {
        if (v.errors?.length) {
          tally.subscriptionErrors++;
          noteUnexpected(
            tally,
            `subscription: ${JSON.stringify(v.errors.map((e) => e.extensions?.['code']))}`,
          );
        } else tally.subscriptionEvents++;
      },
      error: (e) => {
        if (stopping) return;
        tally.subscriptionErrors++;
        noteUnexpected(tally, `subscription closed: ${(e as { code?: number }).code ?? String(e)}`);
      },
      complete: () => {
        if (stopping) return;
        tally.subscriptionErrors++;
        noteUnexpected(tally, 'subscription completed early');
      },
    },
  );
  return async () => {
    stopping = true;
    unsubscribe();
    await client.dispose();
  };
}
