import { uuidV5, MUNINN_NS } from '../domain/canonical.ts';
import {
  ApproveCommand,
  commandHash,
  decideApprove,
  decideFeedback,
  decideGrant,
  decideReject,
  decideRetract,
  decideRevise,
  decideRevoke,
  envelope,
  EpisodeCommand,
  FeedbackCommand,
  GrantAccessCommand,
  parseCommand,
  ProposeCommand,
  receiptKey,
  RejectCommand,
  RetractCommand,
  ReviseCommand,
  RevokeAccessCommand,
  type DecideContext,
} from '../domain/commands.ts';
import type { AdmissionPolicy } from '../domain/admission.ts';
import { badInput, conflict, forbidden, MuninnError, notFound } from '../domain/errors.ts';
import { LedgerEvent } from '../domain/events.ts';
import type { Receipt } from '../domain/fold.ts';
import type { Outcome, RecordClass, Sensitivity } from '../domain/model.ts';
import type { Policy, ReadScope } from '../domain/policy.ts';
import { hasScope, principalKey, type Principal } from '../domain/principal.ts';
import type { Clock, IdSource } from '../ports/clock.ts';
import type { Embedder } from '../ports/embedder.ts';
import { isConversationalRole, type Extractor, type EpisodeTurn } from '../ports/extractor.ts';
import { turnContext, TURN_CONTEXT_EXT } from '../domain/turn-context.ts';
import type { IngestLookups, RecordView } from '../ports/graph.ts';
import type { Ledger, ProjectionAwait } from '../ports/ledger.ts';
import type { Logger } from '../ports/logger.ts';
import { highWaterMark } from './assess.ts';
import type { WriteBudget } from './budget.ts';
import { canonicalText, resolveTime } from './normalize.ts';
import { gather } from './gather.ts';
import { gate, OBSERVATION, plan, type Draft, type PlanCommand } from './plan.ts';
import { StageTimes } from './stage-times.ts';
import {
  findingsOf,
  screenCommand,
  type CommandName,
  type Findings,
  type ScreenedCommand,
} from './screen-command.ts';
import { recordOfHandle } from '../domain/handles.ts';
import {
  approversRequired,
  decideApproval,
  describeApproval,
  partiesOf,
  ReviewReasons,
  type ApproverRules,
} from '../domain/review.ts';

/** What a writer is told. `PENDING` means appended to the ledger but not awaited (or not yet projected). */
export interface WriteReceipt {
  readonly outcome: Outcome;
  readonly recordId: string | null;
  readonly version: number | null;
  readonly reason: string | null;
  readonly eventIds: readonly string[];
  readonly position: string | null;
}

export interface WriteDeps {
  readonly ledger: Ledger;
  readonly store: IngestLookups;
  readonly policy: Policy;
  readonly admission: AdmissionPolicy;
  readonly budget: WriteBudget;
  readonly embedder: Embedder;
  /** Key of the recall handles' MAC (the recall service signs with the same key). */
  readonly handleKey: string;
  /** Separation of duties: per class, approvers other than the proposer (config MUNINN_REVIEW_APPROVERS). */
  readonly approvers: ApproverRules;
  /** HMAC key of secret fingerprints (MUNINN_FINGERPRINT_KEY): the same secret gets the same ref. */
  readonly fingerprintKey: string;
  readonly extractor: Extractor;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly projection: ProjectionAwait;
  readonly logger: Logger;
  readonly maxTextChars: number;
  readonly awaitTimeoutMs: number;
}

interface Planned {
  readonly events: LedgerEvent[];
  /** Drafts refused before the ledger, with their reasons. */
  readonly refused: WriteReceipt[];
}

/**
 * The write side: every path in (a proposal, an episode, a revision, a review decision) becomes ledger
 * events through one pipeline — screen → segment → extract → normalize → embed → resolve → relate →
 * label → score → admit — whose decisions are recorded in the events, then (optionally) waits for the
 * projection and answers with the real outcome.
 */
export { StageTimes };

export class WriteService {
  /** The stage times of the latest episode (for the ingest benchmark). */
  lastTimes: StageTimes | undefined;

  constructor(private readonly d: WriteDeps) {}

  async propose(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const screened = this.screened('propose', parseCommand(ProposeCommand, input, this.d.maxTextChars));
    const cmd = screened.value;
    await this.d.policy.checkWrite(principal, cmd.namespace);
    const hash = commandHash('propose', cmd);
    const key = receiptKey(principal, cmd.idempotencyKey);
    const prior = await this.priorReceipt(principal.tenant, key, hash);
    if (prior) return prior;
    // What screening found in any field (statement, rationale, entity names, labels, ext) labels and flags it.
    const found = findingsOf(screened.fields);
    const draft: Draft = {
      index: 0,
      class: cmd.class,
      statement: { ...cmd.statement, text: canonicalText(cmd.statement.text) },
      about: cmd.about,
      sources: cmd.sources,
      validFrom: cmd.validFrom ?? this.d.clock.now().toISOString(),
      validTo: cmd.validTo ?? null,
      timeSource: cmd.validFrom ? 'STATED' : 'DEFAULTED',
      sensitivity: highWaterMark([cmd.sensitivity, found.labelFloor]),
      flags: found.reasons,
      extractionConfidence: 1,
      rationale: cmd.rationale ?? null,
      ext: cmd.ext,
      source: null,
    };
    const scope = await this.d.policy.readScope(principal, cmd.purpose);
    const ctx = this.ctx(principal);
    const planned = await this.plan(
      ctx,
      scope,
      { ...cmd, idempotencyKey: cmd.idempotencyKey },
      hash,
      [draft],
      null,
      '',
    );
    if (planned.refused.length) return planned.refused[0]!;
    this.charge(principal, cmd.namespace, planned.events.length);
    return this.commit(principal, key, hash, planned.events, wait);
  }

  async ingestEpisode(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt[]> {
    const times = new StageTimes();
    const tScreen = performance.now();
    const screened = this.screened('ingestEpisode', parseCommand(EpisodeCommand, input, 100_000));
    const cmd = screened.value;
    times.add('screen', performance.now() - tScreen);
    await this.d.policy.checkWrite(principal, cmd.namespace);
    const hash = commandHash('episode', cmd);
    const key = receiptKey(principal, cmd.idempotencyKey);
    const prior = await this.d.store.receipt(principal.tenant, key);
    if (prior) {
      if (prior.commandHash !== hash) throw idempotencyConflict(key);
      return this.episodeReceipts(principal.tenant, key, [], null, null);
    }
    const scope = await this.d.policy.readScope(principal, cmd.purpose);
    const ctx = this.ctx(principal);
    const episodeId = uuidV5(`${principal.tenant}\u0000episode\u0000${key}`, MUNINN_NS);

    // Segment the screened turns: every turn and chunk keeps its offsets. A turn's findings are those of
    // its text, speaker and label.
    const turns: EpisodeTurn[] = [];
    const turnScreens = cmd.turns.map((_, i) => findingsOf(screened.fields, `turns.${i}`));
    let text = '';
    for (const [i, t] of cmd.turns.entries()) {
      if (i > 0) text += '\n';
      const start = text.length;
      text += t.text;
      turns.push({
        index: i,
        role: t.role,
        speaker: t.speaker ?? null,
        text: t.text,
        start,
        end: text.length,
        label: t.label ?? null,
      });
    }
    const chunks = turns.flatMap((t) => chunk(t.start, t.end)).map((c, index) => ({ index, ...c }));
    const episodeSensitivity = highWaterMark([cmd.sensitivity, ...turnScreens.map((s) => s.labelFloor)]);
    const episodeEvent: LedgerEvent = {
      ...envelope(ctx, cmd, cmd.namespace, hash),
      type: 'EpisodeStored',
      schemaVersion: 1,
      payload: {
        episodeId,
        source: cmd.source,
        occurredAt: cmd.occurredAt,
        text,
        turns: turns.map(({ text: _t, ...meta }) => meta),
        chunks,
        sensitivity: episodeSensitivity,
        secretRefs: turnScreens.flatMap((s) => s.secretRefs),
        flags: [...new Set(turnScreens.flatMap((s) => s.reasons))].sort(),
      },
    };

    // Extract, then keep only statements whose every span lies inside the episode (uncited = dropped).
    const extracted = await times.time('extract', () =>
      this.d.extractor.extract({ episodeId, source: cmd.source, occurredAt: cmd.occurredAt, turns }),
    );
    const drafts: Draft[] = [];
    const refused: WriteReceipt[] = [];
    for (const [i, st] of extracted.entries()) {
      const cited = st.spans.filter((sp) => sp.start >= 0 && sp.end <= text.length && sp.end > sp.start);
      if (cited.length === 0 || cited.length !== st.spans.length) {
        refused.push(refusal(`statement ${i}: dropped — it does not cite a span of the episode`));
        continue;
      }
      const citedTurns = turns.filter((t) => cited.some((sp) => sp.start < t.end && sp.end > t.start));
      const screens = citedTurns.map((t) => turnScreens[t.index]!);
      const time =
        // An observation is the utterance itself: it happened when the episode did. Time phrases inside
        // it date what it talks about, which the typed statements extracted from it carry.
        st.class === OBSERVATION
          ? { validFrom: cmd.occurredAt, validTo: null, timeSource: 'STATED' as const }
          : resolveTime(st.timeExpression, cmd.occurredAt);
      const sensitivity = highWaterMark([cmd.sensitivity, ...screens.map((s) => s.labelFloor)]);
      drafts.push({
        index: i,
        class: st.class,
        statement: {
          subject: st.subject,
          predicate: st.predicate,
          object: st.object,
          text: canonicalText(st.text),
        },
        about: st.about.map((a) => ({ alias: a.name, ...(a.type ? { type: a.type } : {}) })),
        sources: cited.map((sp) => ({ episodeId, start: sp.start, end: sp.end, label: sp.label })),
        validFrom: time.validFrom,
        validTo: st.class === 'EVENT' ? time.validTo : null,
        timeSource: time.timeSource,
        sensitivity,
        flags: [...new Set(screens.flatMap((s) => s.reasons.filter((r) => !r.startsWith('secret:'))))].sort(),
        extractionConfidence: st.confidence,
        rationale: st.rationale,
        ext: observationExt(st, citedTurns, turns, turnScreens, sensitivity),
        source: cmd.source,
      });
    }
    // What one episode produced is one changeset unless the writer groups it into a larger one.
    const grouped = { ...cmd, changesetId: cmd.changesetId ?? `episode:${episodeId}` };
    const planned = await this.plan(ctx, scope, grouped, hash, drafts, episodeId, '#stmt:', times);
    const events = [episodeEvent, ...planned.events];
    this.charge(principal, cmd.namespace, events.length);
    this.d.logger.info(
      {
        op: 'ingestEpisode',
        tenant: principal.tenant,
        turns: turns.length,
        statements: extracted.length,
        events: events.length,
        refused: refused.length + planned.refused.length,
        ms: times.rounded(),
      },
      'episode planned',
    );
    const receipt = await this.commit(principal, key, hash, events, wait, episodeEvent.eventId, times);
    this.lastTimes = times;
    this.d.logger.info(
      { op: 'ingestEpisode', tenant: principal.tenant, outcome: receipt.outcome, ms: times.rounded() },
      'episode committed',
    );
    const statementEvents = planned.events.filter(
      (e) => e.type === 'RecordProposed' || e.type === 'RecordReinforced',
    ).length;
    return this.episodeReceipts(
      principal.tenant,
      key,
      [...refused, ...planned.refused],
      receipt,
      wait ? null : events,
      receipt.outcome === 'PENDING' ? 0 : statementEvents,
    );
  }

  async revise(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const screened = this.screened('revise', parseCommand(ReviseCommand, input, this.d.maxTextChars));
    const cmd = screened.value;
    const hash = commandHash('revise', cmd);
    const key = receiptKey(principal, cmd.idempotencyKey);
    // The same checks as a fresh write come before a stored receipt is returned.
    const current = await this.visible(principal, cmd.id, 'record');
    await this.d.policy.checkWrite(principal, current.namespace);
    refuseUnreviewedFindings(current.sensitivity, findingsOf(screened.fields));
    const prior = await this.priorReceipt(principal.tenant, key, hash);
    if (prior) return prior;
    checkVersion(current, cmd.expectedVersion);
    const event = decideRevise(this.ctx(principal), cmd, current.namespace);
    if (cmd.statement && event.type === 'RecordRevised') {
      const statement = { ...cmd.statement, text: canonicalText(cmd.statement.text) };
      const [vector] = await this.d.embedder.embed([statement.text]);
      event.payload.statement = statement;
      event.payload.embedding = vector ? { modelId: this.d.embedder.modelId, vector: [...vector] } : null;
    }
    this.charge(principal, current.namespace, 1);
    return this.commit(principal, key, hash, [event], wait);
  }

  async retract(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = this.screened('retract', parseCommand(RetractCommand, input, this.d.maxTextChars)).value;
    const hash = commandHash('retract', cmd);
    const key = receiptKey(principal, cmd.idempotencyKey);
    const current = await this.visible(principal, cmd.id, 'record');
    await this.d.policy.checkWrite(principal, current.namespace);
    const prior = await this.priorReceipt(principal.tenant, key, hash);
    if (prior) return prior;
    checkVersion(current, cmd.expectedVersion);
    this.charge(principal, current.namespace, 1);
    return this.commit(
      principal,
      key,
      hash,
      [decideRetract(this.ctx(principal), cmd, current.namespace)],
      wait,
    );
  }

  /**
   * Approve is a compare-and-swap on the proposal's version, under separation of duties (review.ts): a
   * party to the proposal (its proposer or the proposer's agents) may not approve a record that needs
   * another reviewer — NORMATIVE, injection-flagged, or a class the rules list — (FORBIDDEN), one reviewer
   * never counts twice (CONFLICT), and where the rules ask for N reviewers the approvals before the N-th
   * are recorded as partial (QUEUED). Every check runs before a stored receipt is returned; a refusal
   * appends nothing.
   */
  async approve(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = this.screened('approve', parseCommand(ApproveCommand, input)).value;
    const current = await this.visible(principal, cmd.proposalId, 'proposal');
    await this.d.policy.checkReview(principal, current.namespace);
    const required = approversRequired(this.d.approvers[current.class], current);
    const event = decideApprove(this.ctx(principal), cmd, current.namespace, required);
    const prior = await this.priorReceipt(principal.tenant, event.idempotencyKey, event.commandHash);
    if (prior) return prior;
    checkReviewable(current, cmd.expectedVersion);
    const [by, ...via] = partiesOf(principal, principal.actors);
    const d = decideApproval(
      [current.proposedBy, ...current.proposedVia],
      current.approvals,
      { by: by!, via },
      required,
    );
    if (d.kind === 'SELF') throw forbidden(describeApproval(d), { reason: ReviewReasons.SELF });
    if (d.kind === 'AGAIN')
      throw conflict(describeApproval(d), { reason: ReviewReasons.AGAIN, currentVersion: current.version });
    return this.commit(principal, event.idempotencyKey, event.commandHash, [event], wait);
  }

  async reject(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = this.screened('reject', parseCommand(RejectCommand, input)).value;
    const current = await this.visible(principal, cmd.proposalId, 'proposal');
    await this.d.policy.checkReview(principal, current.namespace);
    const expectedVersion = cmd.expectedVersion ?? current.version;
    const event = decideReject(this.ctx(principal), { ...cmd, expectedVersion }, current.namespace);
    const prior = await this.priorReceipt(principal.tenant, event.idempotencyKey, event.commandHash);
    if (prior) return prior;
    checkReviewable(current, expectedVersion);
    return this.commit(principal, event.idempotencyKey, event.commandHash, [event], wait);
  }

  // ── access grants and recall feedback ────────────────────────────────────────────────────────────

  /** An admin grants a person or agent read access to a namespace subtree (a ledger event). */
  async grantAccess(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to grant access');
    const cmd = this.screened('grantAccess', parseCommand(GrantAccessCommand, input)).value;
    const event = decideGrant(this.ctx(principal), cmd);
    const prior = await this.priorReceipt(principal.tenant, event.idempotencyKey, event.commandHash);
    if (prior) return prior;
    return this.commit(principal, event.idempotencyKey, event.commandHash, [event], wait);
  }

  async revokeAccess(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    if (!hasScope(principal, 'admin')) throw forbidden('the admin scope is required to revoke access');
    const cmd = this.screened('revokeAccess', parseCommand(RevokeAccessCommand, input)).value;
    const grant = await this.d.store.grant(principal.tenant, cmd.grantId);
    if (!grant) throw notFound(`no grant ${cmd.grantId}`);
    const event = decideRevoke(this.ctx(principal), cmd, grant.namespace);
    const prior = await this.priorReceipt(principal.tenant, event.idempotencyKey, event.commandHash);
    if (prior) return prior;
    return this.commit(principal, event.idempotencyKey, event.commandHash, [event], wait);
  }

  /**
   * A caller's verdict on an item a recall gave it. The handle must be one that recall issued (it is
   * MAC'd), and the record must still be visible to the caller; one verdict per caller per item.
   */
  async feedback(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const cmd = this.screened('feedback', parseCommand(FeedbackCommand, input)).value;
    // The handle is bound to the caller it was served to: anyone else's is simply unknown.
    const recordId = recordOfHandle(cmd.recallId, cmd.handle, this.d.handleKey, principalKey(principal));
    if (!recordId) throw notFound('unknown handle for this recall');
    // Under the recall's purpose (its purpose-bound grants found the record), or the feedback purpose.
    const scope = await this.d.policy.readScope(principal, cmd.purpose ?? 'feedback');
    const record = await this.d.store.record(scope, recordId);
    if (!record) throw notFound('unknown handle for this recall');
    const event = decideFeedback(this.ctx(principal), cmd, recordId, record.namespace);
    const prior = await this.priorReceipt(principal.tenant, event.idempotencyKey, event.commandHash);
    if (prior) return prior;
    return this.commit(principal, event.idempotencyKey, event.commandHash, [event], wait);
  }

  /**
   * The one screening pass of a command (src/ingest/screen-command.ts), right after its schema and before
   * anything else reads it: no policy check, lookup, hash, log line or error message sees a raw secret.
   */
  private screened<T>(command: CommandName, cmd: T): ScreenedCommand<T> {
    return screenCommand(command, cmd, this.d.fingerprintKey);
  }

  // ── the pipeline ──────────────────────────────────────────────────────────────────────────────

  /** gather → decide for a batch of drafts of one command: the events to append, and the refusals. */
  private async plan(
    ctx: DecideContext,
    scope: ReadScope,
    cmd: PlanCommand,
    hash: string,
    drafts: readonly Draft[],
    episodeId: string | null,
    suffixPrefix: string,
    times: StageTimes = new StageTimes(),
  ): Promise<Planned> {
    const { kept, refused } = gate(drafts, this.d.admission.gates);
    const facts = await gather(this.d, scope, cmd.namespace, kept, times);
    const events = plan(
      {
        ctx,
        cmd,
        hash,
        drafts: kept,
        episodeId,
        suffixPrefix,
        admission: this.d.admission,
        modelId: this.d.embedder.modelId,
      },
      facts,
    );
    return { events, refused: refused.map(refusal) };
  }

  // ── commit and receipts ───────────────────────────────────────────────────────────────────────

  private charge(principal: Principal, namespace: string, cost: number): void {
    this.d.budget.charge(principal.tenant, principalKey(principal), namespace, cost);
  }

  /** The idempotency rule: same key and same input → the original receipt; another input → CONFLICT. */
  private async priorReceipt(tenant: string, key: string, hash: string): Promise<WriteReceipt | undefined> {
    const r = await this.d.store.receipt(tenant, key);
    if (!r) return undefined;
    if (r.commandHash !== hash) throw idempotencyConflict(key);
    return settle(r, [r.eventId], null);
  }

  /** The record as the caller may see it (NOT_FOUND otherwise: an invisible record is not confirmed). */
  private async visible(principal: Principal, id: string, what: string): Promise<RecordView> {
    const current = await this.d.store.record(await this.d.policy.readScope(principal, undefined), id);
    if (!current) throw notFound(`no ${what} ${id}`);
    return current;
  }

  private ctx(principal: Principal): DecideContext {
    return { principal, now: this.d.clock.now(), newId: () => this.d.ids.uuid() };
  }

  /** Append, optionally wait for the projection, and read the receipt of `primaryId` (default: the last event). */
  private async commit(
    principal: Principal,
    key: string,
    hash: string,
    events: LedgerEvent[],
    wait: boolean,
    primaryId?: string,
    times: StageTimes = new StageTimes(),
  ): Promise<WriteReceipt> {
    // Nothing reaches the ledger that the projector could not decode.
    for (const e of events) {
      const ok = LedgerEvent.safeParse(e);
      if (!ok.success)
        throw new MuninnError(
          'INTERNAL',
          `refusing to append a malformed ${e.type} event`,
          {},
          { cause: ok.error },
        );
    }
    const positions = await times.time('append', () => this.d.ledger.append(events));
    const last = positions[positions.length - 1]!;
    const primary = events.find((e) => e.eventId === primaryId) ?? events[events.length - 1]!;
    const position = `${last.partition}:${last.offset}`;
    const eventIds = events.map((e) => e.eventId);
    const recordId = 'recordId' in primary.payload ? primary.payload.recordId : null;
    this.d.logger.info(
      {
        op: primary.type,
        tenant: principal.tenant,
        eventId: primary.eventId,
        events: events.length,
        position,
      },
      'appended',
    );
    const pending: WriteReceipt = {
      outcome: 'PENDING',
      recordId,
      version: null,
      reason: null,
      eventIds,
      position,
    };
    if (!wait) return pending;
    if (
      !(await times.time('await', () =>
        this.d.projection.waitFor(last.partition, last.offset, this.d.awaitTimeoutMs),
      ))
    ) {
      return {
        ...pending,
        reason: 'appended to the ledger; projection has not caught up within the await timeout',
      };
    }
    // Neo4j makes a commit's node updates visible before its index updates: the checkpoint can be seen a
    // few ms before the receipt written in the same transaction is found by key. Read until it is.
    const deadline = this.d.clock.now().getTime() + this.d.awaitTimeoutMs;
    let r = await this.d.store.receipt(principal.tenant, key);
    while (!r && this.d.clock.now().getTime() < deadline) {
      await new Promise((res) => setTimeout(res, 5));
      r = await this.d.store.receipt(principal.tenant, key);
    }
    if (!r) return { ...pending, reason: 'projected, but no receipt was found within the await timeout' };
    if (r.eventId !== primary.eventId && r.commandHash !== hash) throw idempotencyConflict(key);
    const mine = r.eventId === primary.eventId;
    return settle(r, mine ? eventIds : [r.eventId], mine ? position : null);
  }

  /** An episode's answer: one receipt per statement (the episode's own receipt excluded), plus refusals. */
  private async episodeReceipts(
    tenant: string,
    key: string,
    refused: WriteReceipt[],
    episode: WriteReceipt | null,
    pendingEvents: LedgerEvent[] | null,
    expectedStatements: number | null = null,
  ): Promise<WriteReceipt[]> {
    if (pendingEvents) {
      return [
        ...pendingEvents
          .filter((e) => e.type === 'RecordProposed' || e.type === 'RecordReinforced')
          .map((e) => ({
            outcome: 'PENDING' as const,
            recordId: 'recordId' in e.payload ? e.payload.recordId : null,
            version: null,
            reason: null,
            eventIds: [e.eventId],
            position: episode?.position ?? null,
          })),
        ...refused,
      ];
    }
    const expected = expectedStatements ?? 0;
    const deadline = this.d.clock.now().getTime() + this.d.awaitTimeoutMs;
    const read = async () =>
      (await this.d.store.receiptsByPrefix(tenant, key)).filter((r) => /#stmt:\d+$/.test(r.idempotencyKey));
    let statements = await read();
    // Same index-visibility lag as in commit(): wait until every statement's receipt can be read.
    while (statements.length < expected && this.d.clock.now().getTime() < deadline) {
      await new Promise((res) => setTimeout(res, 5));
      statements = await read();
    }
    if (statements.length < expected) {
      this.d.logger.warn(
        {
          op: 'ingestEpisode',
          tenant,
          expected,
          found: statements.length,
          keys: statements.map((r) => r.idempotencyKey),
        },
        'statement receipts missing',
      );
    }
    statements.sort((a, b) => stmtIndex(a) - stmtIndex(b));
    return [
      ...statements.map((r) => ({
        outcome: r.outcome,
        recordId: r.recordId,
        version: r.version,
        reason: r.reason,
        eventIds: [r.eventId],
        position: null,
      })),
      ...refused,
    ];
  }
}

const CHUNK = 2000;

function chunk(start: number, end: number): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (let s = start; s < end; s += CHUNK) out.push({ start: s, end: Math.min(end, s + CHUNK) });
  return out.length ? out : [{ start, end }];
}

const stmtIndex = (r: Receipt): number => Number(/#stmt:(\d+)$/.exec(r.idempotencyKey)?.[1] ?? 0);

const refusal = (reason: string): WriteReceipt => ({
  outcome: 'REJECTED',
  recordId: null,
  version: null,
  reason,
  eventIds: [],
  position: null,
});

/** Versions only grow, so a stale expectedVersion can be refused before it reaches the ledger. */
function checkVersion(current: RecordView, expectedVersion: number): void {
  if (current.version !== expectedVersion) {
    throw conflict(`expected version ${expectedVersion}, current version is ${current.version}`, {
      currentVersion: current.version,
    });
  }
}

/** A review decision needs a proposal that still waits for review, at the version the reviewer read. */
function checkReviewable(current: RecordView, expectedVersion: number): void {
  if (current.status !== 'CANDIDATE') {
    throw conflict(`proposal ${current.id} is ${current.status}, not waiting for review`, {
      currentVersion: current.version,
    });
  }
  checkVersion(current, expectedVersion);
}

/** The stored key minus its principal tag and origin (commands.ts receiptKey): what the caller sent. */
const callerKey = (stored: string): string => stored.replace(/^[0-9a-f]{24}:[udh]:/, '');

const idempotencyConflict = (stored: string) =>
  conflict(`idempotency key ${JSON.stringify(callerKey(stored))} was already used with a different input`, {
    idempotencyKey: callerKey(stored),
  });

/**
 * A revision is not reviewed and carries no label or flags of its own (RecordRevised), so it may not bring in
 * what screening would send to a reviewer or label higher than the record: that is a new proposal.
 */
function refuseUnreviewedFindings(current: Sensitivity, found: Findings): void {
  const injection = found.reasons.filter((r) => r.startsWith('injection:'));
  if (injection.length > 0)
    throw badInput(
      `the new statement is flagged (${injection.join(', ')}) and a revision is not reviewed: retract the ` +
        'record and propose the statement instead (it will wait for a reviewer)',
      { flags: injection },
    );
  const label = highWaterMark([current, found.labelFloor]);
  if (label !== current)
    throw badInput(
      `the new statement needs the label ${label} (${found.reasons.join(', ')}), above the record's ${current}: ` +
        'a revision cannot raise the label; retract the record and propose the statement instead',
      { flags: found.reasons },
    );
}

/** A receipt as the writer sees it; a version conflict is an error (CONFLICT) on every path. */
function settle(r: Receipt, eventIds: readonly string[], position: string | null): WriteReceipt {
  if (r.outcome === 'CONFLICT') {
    throw conflict(r.reason ?? 'version conflict', {
      currentVersion: r.version ?? -1,
      recordId: r.recordId ?? '',
    });
  }
  return {
    outcome: r.outcome,
    recordId: r.recordId,
    version: r.version,
    reason: r.reason,
    eventIds,
    position,
  };
}

/** A turn's observation carries its neighbouring turns as recall context (see domain/turn-context.ts). */
function observationExt(
  st: { class: RecordClass },
  cited: readonly EpisodeTurn[],
  turns: readonly EpisodeTurn[],
  screens: ReadonlyArray<{ labelFloor: Sensitivity; reasons: readonly string[] }>,
  ceiling: Sensitivity,
): Record<string, unknown> {
  if (st.class !== OBSERVATION || cited.length !== 1) return {};
  const context = turnContext(
    turns.map((t, i) => ({
      speaker: t.speaker,
      role: t.role,
      text: t.text,
      label: screens[i]!.labelFloor,
      conversational: isConversationalRole(t.role),
      // secret refs are already redacted text; any other screen reason keeps the turn out
      flagged: screens[i]!.reasons.some((r) => !r.startsWith('secret:')),
    })),
    cited[0]!.index,
    ceiling,
  );
  return context ? { [TURN_CONTEXT_EXT]: context } : {};
}
