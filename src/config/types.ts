import type { Sensitivity } from '../domain/model.ts';
import type { ApproverRules } from '../domain/review.ts';
import type { StewardThresholds } from '../domain/stewardship.ts';
import type { Settings } from './fields.ts';

/** What `load()` returns, frozen: the settings grouped by the part of the service that reads them. */
export interface Config {
  readonly env: Settings['MUNINN_ENV'];
  readonly role: Settings['MUNINN_ROLE'];
  readonly stateDir: string;
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly introspection: boolean;
    /** The operator console at /console (static files; it signs in with the user's own token). */
    readonly console: boolean;
    /** Handles accepting connections on the port (src/api/acceptors.ts). */
    readonly acceptors: number;
    readonly limits: {
      readonly maxDepth: number;
      readonly maxAliases: number;
      readonly maxTokens: number;
      readonly maxCost: number;
      readonly maxBodyBytes: number;
      readonly maxTextChars: number;
      /** Operations one WebSocket may have running at once (subscriptions and queries alike). */
      readonly maxWsSubscriptions: number;
    };
    readonly awaitTimeoutMs: number;
    /** Overload: writes in progress, projection lag, and the loop busy past a floor of writes: beyond, refused. */
    readonly overload: {
      readonly maxInFlight: number;
      readonly maxLagMs: number;
      readonly maxBusy: number;
      readonly busyFloor: number;
    };
    /** Where writes about one subject take turns: across API processes (graph) or within each (process). */
    readonly subjectTurns: Settings['MUNINN_SUBJECT_TURNS'];
  };
  readonly log: { readonly level: Settings['MUNINN_LOG_LEVEL'] };
  /** Prometheus /metrics on its own port; null = not served. */
  readonly metrics: { readonly host: string; readonly port: number } | null;
  readonly neo4j: {
    readonly uri: string;
    readonly user: string;
    readonly password: string;
    readonly database: string;
    /** TLS trusting this CA's PEM file (a bolt:// or neo4j:// URI); else the URI scheme decides. */
    readonly trustedCaFile: string | undefined;
    /** The most record vectors recall's vector arm holds in process (0: none; it then scans in Cypher). */
    readonly vectorsHeld: number;
    /** The most entities entity resolution and recall's anchors hold in process across tenants (entity-held.ts). */
    readonly entitiesHeld: number;
  };
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly topic: string;
    readonly dlqTopic: string;
    readonly partitions: number;
    readonly groupId: string;
    readonly batchMax: number;
    /** Events per transaction of a rebuild (per partition, gathered across fetches). */
    readonly rebuildBatchMax: number;
    readonly sessionTimeoutMs: number;
    /** A partition whose batch has failed this long is reported stalled (/readyz, `projection`). */
    readonly stallAfterMs: number;
    /** TLS to the brokers (with this CA's PEM file, else the system's CAs); null = plaintext. */
    readonly tls: { readonly caFile: string | undefined } | null;
    /** SASL authentication; null = none. */
    readonly sasl: {
      readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
      readonly username: string;
      readonly password: string;
    } | null;
  };
  readonly embedder:
    | { readonly kind: 'local'; readonly modelDir: string }
    | {
        readonly kind: 'openai';
        readonly url: string;
        readonly model: string;
        readonly apiKey: string | undefined;
      }
    | { readonly kind: 'hashing' };
  readonly extractor:
    | { readonly kind: 'default' }
    | {
        readonly kind: 'chat';
        readonly url: string;
        readonly model: string;
        readonly escalationModel: string | undefined;
        readonly apiKey: string | undefined;
      };
  /** The admission policy document (JSON); the built-in default when absent. */
  readonly policyFile: string | undefined;
  /** What a tenant member without namespace grants reads: the tenant up to this label (null = nothing). */
  readonly access: { readonly defaultClearance: Sensitivity | null };
  /** Separation of duties: per class, approvers other than the proposer needed before a record is ACTIVE. */
  readonly review: { readonly approvers: ApproverRules };
  /** Crypto-shredding: where data keys live, how many second approvers an erasure needs. */
  readonly erasure: { readonly keyDir: string; readonly approvers: number };
  /** Retention: the rules file and the scheduler's interval (it runs in the projector process). */
  readonly retention: { readonly rulesFile: string | undefined; readonly intervalMs: number };
  /** The steward checks (projector process): on or off, how often, which tenants, their thresholds. */
  readonly steward: {
    readonly enabled: boolean;
    readonly intervalMs: number;
    readonly tenants: readonly string[] | null;
    readonly thresholds: StewardThresholds;
  };
  /** The transcript outbox and its handoff (seed 000): exporter, Heimdall contract, curator. */
  readonly handoff: {
    readonly outboxDir: string;
    readonly stream: string;
    readonly maxTokenTtlS: number;
    /** HMAC key of the pseudonyms (never logged or written); absent = the exporter refuses to run. */
    readonly pseudonymKey: { readonly keyId: string; readonly secret: string } | undefined;
    readonly source:
      | { readonly kind: 'file'; readonly dir: string }
      | { readonly kind: 'http'; readonly url: string; readonly token: string | undefined }
      | undefined;
    readonly allowlist: ReadonlyArray<{ readonly source: string; readonly owner: string }>;
    readonly quietPeriodMs: number;
    readonly selectedWebUiSessions: readonly string[];
    readonly stateFile: string;
    /** `muninn handoff serve` listens here. */
    readonly host: string;
    readonly port: number;
    /** The curator's view: the /handoff URL, and how it gets a fresh single-use token (never logged). */
    readonly url: string;
    readonly tokenCommand: string | undefined;
    /** The curator's own token for the main API (MUNINN_GRAPHQL_URL); never logged. */
    readonly curatorToken: string | undefined;
    readonly curatorNamespace: string;
  };
  /** Browser origins allowed to call /graphql and the MCP bridge (CORS); none by default. */
  readonly corsOrigins: readonly string[];
  /** Client commands (`muninn mcp` over stdio, `muninn project`): where GraphQL is, and the user's own token. */
  readonly client: { readonly graphqlUrl: string; readonly token: string | undefined };
  /** The MCP bridge (`muninn mcp`). */
  readonly mcp: {
    readonly host: string;
    readonly port: number;
    /** The bridge's resource identifier (RFC 8707/9728): the `aud` its callers' tokens must carry. */
    readonly audience: string;
    readonly writeTools: boolean;
    /** RFC 8693 token endpoint the bridge exchanges its callers' tokens at (the IdP's; dev: Muninn's). */
    readonly exchangeUrl: string | undefined;
    readonly clientId: string;
    /** The bridge's client secret at the token endpoint; the dev endpoint is served only when set. */
    readonly clientSecret: string | undefined;
    readonly authorizationServers: readonly string[];
  };
  /** MAC key of recall handles; every API process of a deployment needs the same one. Random when unset. */
  readonly handleKey: string | undefined;
  /**
   * HMAC key of secret fingerprints (the `[secret:<kind>:<fp>]` refs); every API process of a deployment needs
   * the same one. Required in production; elsewhere a dev key under the state dir when unset.
   */
  readonly fingerprintKey: string | undefined;
  /** The audit trail: hash-chained files in `dir`, MAC'd with `key` (a dev key from the state dir when unset). */
  readonly audit: { readonly dir: string; readonly key: string | undefined };
  /** OTLP/HTTP traces URL (spans of audited operations); none = no exporter. */
  readonly otlpEndpoint: string | undefined;
  readonly auth: {
    readonly issuer: string;
    readonly audience: string;
    readonly handoffAudience: string;
    /** Exactly one JWKS source; in development, a file the `muninn token` command creates. */
    readonly jwks:
      { readonly kind: 'url'; readonly url: string } | { readonly kind: 'file'; readonly path: string };
    readonly algorithms: readonly string[];
    readonly clockSkewS: number;
    readonly tenantClaim: string;
    /** Tokens living longer than this (exp − iat, or exp − now without iat) are refused. */
    readonly maxTokenTtlS: number;
  };
}
