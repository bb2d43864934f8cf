import { uuidV5, MUNINN_NS } from '../../domain/canonical.ts';
import { commandHash, envelope, EpisodeCommand, parseCommand, receiptKey } from '../../domain/commands.ts';
import type { EventOf, LedgerEvent } from '../../domain/events.ts';
import type { RecordClass, Sensitivity } from '../../domain/model.ts';
import type { Principal } from '../../domain/principal.ts';
import { isConversationalRole, type EpisodeTurn, type ExtractedStatement } from '../../ports/extractor.ts';
import { turnContext, TURN_CONTEXT_EXT } from '../../domain/turn-context.ts';
import { highWaterMark } from '../assess.ts';
import { canonicalText, resolveTime } from '../normalize.ts';
import { OBSERVATION, type Draft } from '../plan.ts';
import { StageTimes } from '../stage-times.ts';
import { findingsOf } from '../screen-command.ts';
import type { CommandDeps, WriteDeps } from '../deps.ts';
import { commit, episodeReceipts } from '../commit.ts';
import { accessAndReceipt, charge, contextOf, screenOf } from '../steps.ts';
import { idempotencyConflict, refusal, type WriteReceipt } from '../receipts.ts';
import { planDrafts, prepareDrafts, relatableSubjects } from '../plan-drafts.ts';

type EpisodeDeps = CommandDeps &
  Pick<WriteDeps, 'budget' | 'embedder' | 'admission' | 'extractor' | 'subjects'>;

type TurnScreen = ReturnType<typeof findingsOf>;

/**
 * An episode (a transcript window): stored whole as EpisodeStored, then each statement the extractor
 * cites from it goes through gather → decide as one changeset (`episode:<id>` unless the writer groups
 * it into a larger one). One receipt per statement, plus the refusals.
 */
export async function ingestEpisode(
  d: EpisodeDeps,
  principal: Principal,
  input: unknown,
  wait: boolean,
): Promise<{ receipts: WriteReceipt[]; times: StageTimes | null }> {
  const times = new StageTimes();
  const t0 = performance.now();
  const screened = screenOf(d, 'ingestEpisode', parseCommand(EpisodeCommand, input, 100_000));
  const cmd = screened.value;
  const hash = commandHash('episode', cmd);
  const key = receiptKey(principal, cmd.idempotencyKey);
  const [access, prior] = await accessAndReceipt(d, principal, cmd.namespace, key);
  times.add('check', performance.now() - t0); // screen, access, receipt
  if (prior) {
    if (prior.commandHash !== hash) throw idempotencyConflict(key);
    return { receipts: await episodeReceipts(d, principal.tenant, key, [], null, null), times: null };
  }
  const scope = access.readScope(cmd.purpose);
  const ctx = contextOf(d, principal);
  const episodeId = uuidV5(`${principal.tenant}\u0000episode\u0000${key}`, MUNINN_NS);
  const seg = segment(cmd.turns, (i) => findingsOf(screened.fields, `turns.${i}`));
  const episodeEvent: LedgerEvent = {
    ...envelope(ctx, cmd, cmd.namespace, hash),
    type: 'EpisodeStored',
    schemaVersion: 1,
    payload: episodePayload(episodeId, cmd, seg),
  };
  const extracted = await times.time('extract', () =>
    d.extractor.extract({ episodeId, source: cmd.source, occurredAt: cmd.occurredAt, turns: seg.turns }),
  );
  const { drafts, refused } = draftsOf(extracted, episodeId, cmd, seg);
  // What one episode produced is one changeset unless the writer groups it into a larger one.
  const grouped = { ...cmd, changesetId: cmd.changesetId ?? `episode:${episodeId}` };
  const log = { op: 'ingestEpisode', tenant: principal.tenant };
  // Decided and committed with the episode's subjects held (subject-gate.ts).
  const asked = performance.now();
  const prepared = prepareDrafts(d, drafts, times); // embedded while the turn is waited for
  const { receipt, planned, refusals } = await d.subjects.around(
    principal.tenant,
    relatableSubjects(drafts),
    async () => {
      times.add('turn', performance.now() - asked);
      const ready = await prepared;
      const planned = await planDrafts(d, ctx, scope, grouped, hash, ready, episodeId, '#stmt:', times);
      const events = [episodeEvent, ...planned.events];
      charge(d, principal, cmd.namespace, events.length);
      const refusals = [...refused, ...planned.refused];
      const counts = { statements: extracted.length, events: events.length, refused: refusals.length };
      d.logger.info({ ...log, turns: seg.turns.length, ...counts, ms: times.rounded() }, 'episode planned');
      const receipt = await commit(d, principal, key, hash, events, wait, episodeEvent.eventId, times);
      return { outcome: receipt.outcome, position: receipt.position, receipt, planned, refusals };
    },
  );
  d.logger.info({ ...log, outcome: receipt.outcome, ms: times.rounded() }, 'episode committed');
  const expected = receipt.outcome === 'PENDING' ? 0 : statementEvents(planned.events);
  const pending = wait ? null : [episodeEvent, ...planned.events];
  const receipts = await episodeReceipts(d, principal.tenant, key, refusals, receipt, pending, expected);
  return { receipts, times };
}

/** The events that answer one statement each: a proposal, or a reinforcement of a stored record. */
const statementEvents = (events: readonly LedgerEvent[]): number =>
  events.filter((e) => e.type === 'RecordProposed' || e.type === 'RecordReinforced').length;

interface Segmented {
  readonly turns: EpisodeTurn[];
  readonly screens: TurnScreen[];
  readonly text: string;
}

/**
 * Segment the screened turns into one text: every turn keeps its offsets. A turn's findings are those of
 * its text, speaker and label.
 */
function segment(
  input: ReadonlyArray<{
    role: string;
    speaker?: string | undefined;
    text: string;
    label?: string | undefined;
  }>,
  screenOfTurn: (i: number) => TurnScreen,
): Segmented {
  const turns: EpisodeTurn[] = [];
  let text = '';
  for (const [i, t] of input.entries()) {
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
  return { turns, screens: input.map((_, i) => screenOfTurn(i)), text };
}

function episodePayload(
  episodeId: string,
  cmd: { source: string; occurredAt: string; sensitivity: Sensitivity },
  seg: Segmented,
): EventOf<'EpisodeStored'>['payload'] {
  return {
    episodeId,
    source: cmd.source,
    occurredAt: cmd.occurredAt,
    text: seg.text,
    turns: seg.turns.map(({ text: _t, ...meta }) => meta),
    chunks: seg.turns.flatMap((t) => chunk(t.start, t.end)).map((c, index) => ({ index, ...c })),
    sensitivity: highWaterMark([cmd.sensitivity, ...seg.screens.map((s) => s.labelFloor)]),
    secretRefs: seg.screens.flatMap((s) => s.secretRefs),
    flags: [...new Set(seg.screens.flatMap((s) => s.reasons))].sort(),
  };
}

/** The extracted statements as drafts: only those whose every span lies inside the episode (uncited = dropped). */
function draftsOf(
  extracted: readonly ExtractedStatement[],
  episodeId: string,
  cmd: { source: string; occurredAt: string; sensitivity: Sensitivity },
  seg: Segmented,
): { drafts: Draft[]; refused: WriteReceipt[] } {
  const drafts: Draft[] = [];
  const refused: WriteReceipt[] = [];
  for (const [i, st] of extracted.entries()) {
    const cited = st.spans.filter((sp) => sp.start >= 0 && sp.end <= seg.text.length && sp.end > sp.start);
    if (cited.length === 0 || cited.length !== st.spans.length) {
      refused.push(refusal(`statement ${i}: dropped — it does not cite a span of the episode`));
      continue;
    }
    const citedTurns = seg.turns.filter((t) => cited.some((sp) => sp.start < t.end && sp.end > t.start));
    const screens = citedTurns.map((t) => seg.screens[t.index]!);
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
      ext: observationExt(st, citedTurns, seg.turns, seg.screens, sensitivity),
      source: cmd.source,
    });
  }
  return { drafts, refused };
}

const CHUNK = 2000;

function chunk(start: number, end: number): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  for (let s = start; s < end; s += CHUNK) out.push({ start: s, end: Math.min(end, s + CHUNK) });
  return out.length ? out : [{ start, end }];
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
