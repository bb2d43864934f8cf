import type { AuditFacts } from '../domain/audit-chain.ts';

/** The append-only audit trail (domain/audit-chain.ts says what an entry holds and how it is chained). */
export interface AuditLog {
  /** Appends in call order; resolves when the entry is handed to the store. */
  append(facts: AuditFacts): Promise<void>;
  close(): Promise<void>;
}

export const noAudit: AuditLog = {
  append: () => Promise.resolve(),
  close: () => Promise.resolve(),
};
