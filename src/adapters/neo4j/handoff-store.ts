import { canonicalJson } from '../../domain/canonical.ts';
import { initialHandoffState, parseHandoffState, type HandoffState } from '../../domain/handoff-state.ts';
import type { HandoffStateStore } from '../../ports/handoff-state.ts';
import type { CypherExecutor } from './executor.ts';

/**
 * The handoff contract's state (checkpoint, lease, counters) per outbox stream, one node each. `transact`
 * takes the node's write lock first (the SET), so concurrent lease and commit calls — from any number of
 * API processes — are serialized by Neo4j, and a decision is made on the state it replaces.
 */
export function neo4jHandoffStateStore(db: CypherExecutor): HandoffStateStore {
  const decode = (stream: string, json: unknown): HandoffState =>
    typeof json === 'string' ? parseHandoffState(JSON.parse(json)) : initialHandoffState(stream);
  return {
    async read(stream) {
      const res = await db.read(
        'handoff.state',
        'MATCH (h:HandoffState {stream: $stream}) RETURN h.json AS j',
        {
          stream,
        },
      );
      return decode(stream, res.records[0]?.get('j'));
    },
    transact(stream, fn) {
      return db.writeTx('handoff.transact', async (tx) => {
        const res = await tx.run(
          `MERGE (h:HandoffState {stream: $stream})
           ON CREATE SET h.json = null
           SET h.locked = true
           RETURN h.json AS j`,
          { stream },
        );
        const { next, result } = fn(decode(stream, res.records[0]?.get('j')));
        if (next)
          await tx.run('MATCH (h:HandoffState {stream: $stream}) SET h.json = $json, h.locked = null', {
            stream,
            json: canonicalJson(next),
          });
        return result;
      });
    },
  };
}

/**
 * Handoff credentials are single-use: a token id (jti) is accepted once. The unique constraint makes the
 * check atomic across processes and restarts; ids are kept until their token expires.
 */
export function neo4jTokenReplayGuard(db: CypherExecutor, gcEvery = 64) {
  let uses = 0;
  return {
    /** true when this is the first use of `jti`; false for a replay. */
    async firstUse(jti: string, expiresAt: number): Promise<boolean> {
      const res = await db.write(
        'handoff.tokenUse',
        `MERGE (t:TokenUse {jti: $jti})
         ON CREATE SET t.exp = $exp, t.fresh = true
         WITH t, coalesce(t.fresh, false) AS fresh
         REMOVE t.fresh
         RETURN fresh`,
        { jti, exp: expiresAt },
      );
      // Forget ids whose tokens can no longer be presented anyway — now and then, not on every request.
      if (++uses % gcEvery === 0)
        await db.write(
          'handoff.tokenUse.gc',
          'MATCH (t:TokenUse) WHERE t.exp < $now WITH t LIMIT 100 DELETE t',
          {
            now: Math.floor(Date.now() / 1000) - 3600,
          },
        );
      return res.records[0]?.get('fresh') === true;
    },
  };
}
