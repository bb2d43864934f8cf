/**
 * Data keys for crypto-shredding (see domain/sealing.ts), by key id (`tenant/kind/id`, never content).
 * The file adapter keeps raw 256-bit keys in the state dir; the port is shaped for a KMS or Vault binding:
 * `forSealing` maps to "generate a data key" (KMS GenerateDataKey / Vault transit datakey, the wrapped key
 * stored by id), `forOpening` to "unwrap", `destroy` to deleting the wrapped key (or the named transit key)
 * — after which no copy of the ledger, backup or export can be opened again.
 */
export interface KeyStore {
  /**
   * The keys to seal new events under, created when absent. A destroyed id is never re-created: the call
   * fails with CONFLICT, so nothing new is ever written for an erased item.
   */
  forSealing(keyIds: readonly string[]): Promise<ReadonlyMap<string, Uint8Array>>;
  /** The key to open a sealed payload; null when it was destroyed (or never existed). */
  forOpening(keyId: string): Promise<Uint8Array | null>;
  /** Destroys the keys (idempotent); afterwards `state` says DESTROYED for each. */
  destroy(keyIds: readonly string[]): Promise<void>;
  state(keyId: string): Promise<KeyState>;
}

export type KeyState = 'ACTIVE' | 'DESTROYED' | 'ABSENT';
