import { nodeOutboxRecords, nodeOutboxStore } from '../../src/adapters/files/outbox-dir.ts';
import { outboxReader, type OutboxReader } from '../../src/handoff/contract.ts';
import * as exporter from '../../src/handoff/exporter.ts';
import * as protocol from '../../src/handoff/outbox.ts';
import type { PublishHooks } from '../../src/ports/outbox.ts';

/**
 * The outbox protocol, the handoff's reader and the exporter over an outbox directory on disk, bound the way
 * the composition root binds them (src/cli/main.ts, src/handoff-process.ts): the tests name directories.
 */
export const publishObject = (dir: string, obj: unknown, hooks?: PublishHooks) =>
  protocol.publishObject(nodeOutboxStore(dir), obj, hooks);

export const appendManifest = (
  dir: string,
  objectIds: readonly string[],
  opts?: Parameters<typeof protocol.appendManifest>[2],
) => protocol.appendManifest(nodeOutboxStore(dir), objectIds, opts);

export const verifyChain = (dir: string, opts?: Parameters<typeof protocol.verifyChain>[1]) =>
  protocol.verifyChain(nodeOutboxRecords(dir), opts);

export const fileOutboxReader = (dir: string): OutboxReader => outboxReader(nodeOutboxRecords(dir));

export type ExporterDeps = Omit<exporter.ExporterDeps, 'outbox'>;
export interface ExportConfig extends exporter.ExportConfig {
  outboxDir: string;
}

export const exportOnce = (deps: ExporterDeps, { outboxDir, ...config }: ExportConfig) =>
  exporter.exportOnce({ ...deps, outbox: nodeOutboxStore(outboxDir) }, config);
