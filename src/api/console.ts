import { readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The operator console: static files under /console, read once at start-up into an allow-list (no path
 * from a request ever reaches the file system). The page is a plain client of /graphql: it signs in with
 * the user's own token, kept in the browser's sessionStorage — there is no server-side session.
 */
const CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));
export const CONSOLE_PATH = '/console';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Only the page's own scripts and styles run, and it talks only to its own origin (HTTP and WebSocket):
 * record text rendered by mistake as markup still could not run a script or call out.
 */
const HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-cache',
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

function filesIn(dir: string, prefix: string, accept: (name: string) => boolean): Array<[string, Asset]> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d): Array<[string, Asset]> => {
    if (d.isDirectory()) return filesIn(join(dir, d.name), `${prefix}${d.name}/`, accept);
    const type = TYPES[extname(d.name)];
    if (!type || !accept(d.name)) return [];
    return [[`${prefix}${d.name}`, { body: readFileSync(join(dir, d.name)), type }]];
  });
}

/** The console's files plus the graphql-ws browser client (its ESM build and the chunk it imports). */
export function loadConsoleAssets(): ReadonlyMap<string, Asset> {
  const assets = new Map(filesIn(CONSOLE_DIR, `${CONSOLE_PATH}/`, () => true));
  const index = assets.get(`${CONSOLE_PATH}/index.html`);
  if (!index) throw new Error(`console assets missing in ${CONSOLE_DIR}`);
  assets.set(`${CONSOLE_PATH}/`, index);
  const wsClient = fileURLToPath(import.meta.resolve('graphql-ws/client'));
  for (const [name, asset] of filesIn(dirname(wsClient), `${CONSOLE_PATH}/vendor/graphql-ws/`, (n) =>
    /^(client|common-[\w-]+)\.js$/.test(n),
  ))
    assets.set(name, asset);
  return assets;
}

/** Answers a request under /console; `false` when the path is not the console's. */
export function serveConsole(
  assets: ReadonlyMap<string, Asset>,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): boolean {
  if (pathname !== CONSOLE_PATH && !pathname.startsWith(`${CONSOLE_PATH}/`)) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    res.end('method not allowed');
    return true;
  }
  // Relative module imports resolve against the directory, so the page lives at /console/.
  if (pathname === CONSOLE_PATH) {
    res.writeHead(308, { location: `${CONSOLE_PATH}/` });
    res.end();
    return true;
  }
  const asset = assets.get(pathname);
  if (!asset) {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...HEADERS });
    res.end('not found');
    return true;
  }
  res.writeHead(200, { 'content-type': asset.type, 'content-length': asset.body.length, ...HEADERS });
  res.end(req.method === 'HEAD' ? undefined : asset.body);
  return true;
}
