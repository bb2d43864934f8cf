import type { Principal } from '../domain/principal.ts';
import { grantAccess, revokeAccess } from './commands/access.ts';
import { ingestEpisode } from './commands/episode.ts';
import { feedback } from './commands/feedback.ts';
import { dismissFinding } from './commands/finding.ts';
import { propose } from './commands/propose.ts';
import { retract } from './commands/retract.ts';
import { approve, reject } from './commands/review.ts';
import { revise } from './commands/revise.ts';
import { relate } from './commands/relate.ts';
import { rollback, type RollbackReceipt } from './commands/rollback.ts';
import type { WriteReceipt } from './receipts.ts';
import type { WriteDeps } from './deps.ts';
import { StageTimes } from './stage-times.ts';

export type { WriteReceipt } from './receipts.ts';
export type { WriteDeps } from './deps.ts';
export { StageTimes } from './stage-times.ts';

/**
 * The write side: every path in (a proposal, an episode, a revision, a review decision) becomes ledger
 * events through one pipeline — screen → segment → extract → normalize → embed → resolve → relate →
 * label → score → admit — whose decisions are recorded in the events, then (optionally) waits for the
 * projection and answers with the real outcome.
 *
 * One file per command under ./commands/, each given only the ports it uses; each runs
 * screen → check → gather (gather.ts) → decide (plan.ts, pure) → commit (commit.ts).
 */
export class WriteService {
  constructor(private readonly d: WriteDeps) {}

  async propose(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    const times = new StageTimes();
    const receipt = await this.d.overload.run(() => propose(this.d, principal, input, wait, times));
    // Only a write that reached the ledger: a refusal or a repeat has no append to time.
    if ('append' in times.ms) this.d.telemetry.write('propose', times.ms);
    return receipt;
  }

  async ingestEpisode(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt[]> {
    const { receipts, times } = await this.d.overload.run(() =>
      ingestEpisode(this.d, principal, input, wait),
    );
    if (times && 'append' in times.ms) this.d.telemetry.write('episode', times.ms);
    return receipts;
  }

  revise(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => revise(this.d, principal, input, wait));
  }

  retract(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => retract(this.d, principal, input, wait));
  }

  relate(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => relate(this.d, principal, input, wait));
  }

  approve(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => approve(this.d, principal, input, wait));
  }

  reject(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => reject(this.d, principal, input, wait));
  }

  grantAccess(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => grantAccess(this.d, principal, input, wait));
  }

  revokeAccess(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => revokeAccess(this.d, principal, input, wait));
  }

  feedback(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => feedback(this.d, principal, input, wait));
  }

  /** A reviewer accepts a steward finding that holds; the steward does not raise it again (commands/finding.ts). */
  dismissFinding(principal: Principal, input: unknown, wait: boolean): Promise<WriteReceipt> {
    return this.d.overload.run(() => dismissFinding(this.d, principal, input, wait));
  }

  /** Revert an event, a changeset or a namespace to a time, by compensating revisions (commands/rollback.ts). */
  rollback(principal: Principal, input: unknown, wait: boolean): Promise<RollbackReceipt> {
    return this.d.overload.run(() => rollback(this.d, principal, input, wait));
  }
}
