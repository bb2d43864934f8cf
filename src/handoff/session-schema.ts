/**
 * The Hermes-style session JSON this exporter accepts — the API contract of the session-source port.
 *
 * Listing (HTTP: `GET {base}/sessions`, file adapter: one `*.json` per session):
 *
 *   { "sessions": [ { "id": string, "source": string, "owner": string, "updated_at": ISO-8601, "revision": string } ] }
 *
 * Session (HTTP: `GET {base}/sessions/{id}`):
 *
 *   {
 *     "id":         string,                      // raw source id — pseudonymized, never exported
 *     "source":     "signal" | "webui" | "telegram" | "discord" | "cli" | "api",   // source class
 *     "owner":      string,                      // source-derived owner attribution (e.g. Signal sender mapping)
 *     "title":      string?,                     // dropped
 *     "updated_at": ISO-8601 with offset,        // last change of the session
 *     "revision":   string,                      // opaque; changes whenever anything in the session changes
 *     "messages": [                              // in conversation order; created_at must be non-decreasing
 *       {
 *         "id":         string,                  // unique within the session
 *         "role":       "system" | "user" | "assistant" | "tool",
 *         "content":    string | null,
 *         "created_at": ISO-8601 with offset,
 *         "final":      boolean?,                // assistant only: true = the turn's final answer
 *         "reasoning":  string?,                 // dropped
 *         "tool_calls": [ { "id", "name", "arguments", "status":
 *                           "pending" | "awaiting_approval" | "completed" | "failed" } ]?,   // dropped
 *         "tool_call_id": string?,               // tool results: dropped
 *         "attachments": [ any ]?,               // dropped
 *         "metadata":    object?                 // dropped
 *       }
 *     ],
 *     "metadata": object?                        // dropped (configuration, paths, channel/account data)
 *   }
 *
 * Unknown extra fields are tolerated and dropped (the exporter builds a new record, it never copies).
 * An assistant message is *final* when `final === true`, or when `final` is absent and it carries no tool
 * calls and non-empty content. `final: false` marks intermediate work and is never exported.
 * Anything that does not parse is MALFORMED and defers the whole session (fail closed).
 */
import { z } from 'zod';

export const KNOWN_SOURCES = ['signal', 'webui', 'telegram', 'discord', 'cli', 'api'] as const;
export type SourceClass = (typeof KNOWN_SOURCES)[number];
/** Sources without trusted owner identity: exported only when the operator selected the session explicitly. */
export const WEBUI_CLASS_SOURCES: readonly string[] = ['webui'];

const isoTime = z.iso.datetime({ offset: true });

export const ToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  arguments: z.unknown(),
  status: z.enum(['pending', 'awaiting_approval', 'completed', 'failed']),
});

export const MessageSchema = z.object({
  id: z.string().min(1),
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().nullable(),
  created_at: isoTime,
  final: z.boolean().optional(),
  reasoning: z.unknown().optional(),
  tool_calls: z.array(ToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  attachments: z.array(z.unknown()).optional(),
  metadata: z.unknown().optional(),
});

export const SessionSchema = z.object({
  id: z.string().min(1),
  source: z.string().min(1),
  owner: z.string().min(1),
  title: z.string().nullable().optional(),
  updated_at: isoTime,
  revision: z.string().min(1),
  messages: z.array(MessageSchema),
  metadata: z.unknown().optional(),
});

export type HermesToolCall = z.infer<typeof ToolCallSchema>;
export type HermesMessage = z.infer<typeof MessageSchema>;
export type HermesSession = z.infer<typeof SessionSchema>;

export const SessionListSchema = z.object({
  sessions: z.array(
    z.object({
      id: z.string().min(1),
      source: z.string().min(1),
      owner: z.string().min(1).optional(),
      updated_at: isoTime.optional(),
      revision: z.string().min(1).optional(),
    }),
  ),
});

export function isFinalAssistant(m: HermesMessage): boolean {
  if (m.role !== 'assistant') return false;
  if (m.final === false) return false;
  const hasText = typeof m.content === 'string' && m.content.trim().length > 0;
  if (m.final === true) return hasText;
  return hasText && (m.tool_calls === undefined || m.tool_calls.length === 0);
}
