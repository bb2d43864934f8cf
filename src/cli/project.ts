import { parseArgs } from 'node:util';
import type { Config } from '../config/index.ts';
import { profileNamed } from '../delivery/profiles.ts';
import { projectFile } from '../delivery/project.ts';
import { nodeTextFiles } from '../adapters/files/text-files.ts';

/** `muninn project agents-md --namespace NS [--profile P] [--file F] [--query Q] [--check] [--force]` */
export async function projectCmd(args: string[], c: Config): Promise<number> {
  const [what, ...rest] = args;
  if (what !== 'agents-md') {
    process.stderr.write('usage: muninn project agents-md --namespace NS [--profile codex] [--file F]\n');
    return 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      namespace: { type: 'string' },
      profile: { type: 'string', default: 'codex' },
      file: { type: 'string' },
      query: { type: 'string' },
      purpose: { type: 'string' },
      check: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
    },
  });
  if (!values.namespace) {
    process.stderr.write('project agents-md needs --namespace\n');
    return 2;
  }
  if (!c.client.token) {
    process.stderr.write('project agents-md needs MUNINN_TOKEN (your own token for the API)\n');
    return 2;
  }
  const profile = profileNamed(values.profile);
  const out = await projectFile({
    graphqlUrl: c.client.graphqlUrl,
    token: c.client.token,
    namespace: values.namespace,
    profile,
    file: values.file ?? profile.defaultFile,
    ...(values.query ? { query: values.query } : {}),
    ...(values.purpose ? { purpose: values.purpose } : {}),
    check: values.check,
    force: values.force,
    files: nodeTextFiles,
  });
  const verb = !out.changed ? 'unchanged' : values.check ? 'would change' : 'written';
  process.stdout.write(`${out.file}: ${verb} (${out.rules} approved rule${out.rules === 1 ? '' : 's'})\n`);
  return values.check && out.changed ? 1 : 0;
}
