/**
 * Data minimization — pure. Builds a NEW normalized record from a qualified window; nothing is copied wholesale.
 * Kept: user text, final-assistant text, order, timestamps, source class, keyed pseudonyms, schema metadata.
 * Dropped: system messages, reasoning, intermediate assistant turns, tool calls/results/approvals, titles,
 * metadata (configuration, paths, channel data), attachments and every raw identifier.
 */
import type { Pseudonymizer } from './pseudonym.ts';
import { retainedMessages } from './qualify.ts';
import type { HermesMessage, HermesSession } from './session-schema.ts';

export const WINDOW_SCHEMA = 'muninn.transcript-window/1';

export interface WindowMessage {
  ref: string;
  role: 'user' | 'assistant';
  text: string;
  at: string;
}

export interface TranscriptWindow {
  schema: typeof WINDOW_SCHEMA;
  keyId: string;
  source: string;
  ownerRef: string;
  sessionRef: string;
  revisionRef: string;
  /** Ref of the last message of the previous window of this session, null for the first. */
  after: string | null;
  messages: WindowMessage[];
  window: { firstAt: string; lastAt: string; count: number };
}

export function minimize(
  session: HermesSession,
  window: readonly HermesMessage[],
  after: string | null,
  pseudo: Pseudonymizer,
): TranscriptWindow {
  const src = session.source;
  const messages: WindowMessage[] = retainedMessages(window).map((m) => ({
    ref: pseudo.ref('message', src, session.id, m.id),
    role: m.role === 'user' ? 'user' : 'assistant',
    text: (m.content ?? '').normalize('NFC'),
    at: new Date(m.created_at).toISOString(),
  }));
  const first = messages[0];
  const last = messages[messages.length - 1];
  if (!first || !last) throw new Error('minimize: empty window');
  return {
    schema: WINDOW_SCHEMA,
    keyId: pseudo.keyId,
    source: src,
    ownerRef: pseudo.ref('owner', src, session.owner),
    sessionRef: pseudo.ref('session', src, session.id),
    revisionRef: pseudo.ref('revision', src, session.id, session.revision),
    after,
    messages,
    window: { firstAt: first.at, lastAt: last.at, count: messages.length },
  };
}
