// Live cross-check of `pqot sig` against @noble/post-quantum and @noble/curves (pinned in
// package-lock.json), independent implementations: ML-DSA-44/65/87, Ed25519, and the
// ML-DSA-65+Ed25519 hybrid rebuilt here from noble's parts as draft-ietf-lamps-pq-composite-sigs
// describes it (docs/crypto.md, "The hybrid signature"). For random seeds: equal keys, equal
// deterministic signatures (and signatures with an explicit rnd), each side verifies the other's
// hedged signatures, and both refuse mutated signatures, messages and contexts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';

const PQOT = process.env.PQOT_BIN;
const SEEDS = Number(process.env.PQOT_INTEROP_SIG_SEEDS ?? 40);

const hex = (u8) => Buffer.from(u8).toString('hex');
const bytes = (h) => new Uint8Array(Buffer.from(h, 'hex'));
const concat = (...parts) => new Uint8Array(Buffer.concat(parts.map((p) => Buffer.from(p))));

assert.ok(PQOT, 'PQOT_BIN must name the pqot binary');

// `pqot sig ...` and its `name=hex` lines.
function pqot(...args) {
  const out = execFileSync(PQOT, ['sig', ...args], { encoding: 'utf8' });
  const fields = {};
  for (const line of out.trim().split('\n')) {
    const [k, v] = line.split('=');
    fields[k] = v;
  }
  return fields;
}

// `pqot sig verify`: true (valid, exit 0) or false (invalid, exit 1); anything else fails the test.
function pqotVerifies(alg, pk, msg, ctx, sig) {
  const args = ['sig', 'verify', '--alg', alg, '--pk', hex(pk), '--msg', hex(msg), '--sig', hex(sig)];
  if (ctx.length > 0) args.push('--ctx', hex(ctx));
  const r = spawnSync(PQOT, args, { encoding: 'utf8' });
  assert.ok(r.status === 0 || r.status === 1, `pqot sig verify exited ${r.status}: ${r.stderr}`);
  assert.equal(r.stdout.trim(), r.status === 0 ? 'valid' : 'invalid');
  return r.status === 0;
}

function pqotSign(alg, sk, msg, ctx, mode) {
  const args = ['sign', '--alg', alg, '--sk', hex(sk), '--msg', hex(msg)];
  if (ctx.length > 0) args.push('--ctx', hex(ctx));
  if (mode === 'deterministic') args.push('--deterministic');
  else if (mode instanceof Uint8Array) args.push('--rnd', hex(mode));
  return bytes(pqot(...args).sig);
}

// The hybrid from noble's parts (draft-ietf-lamps-pq-composite-sigs, section 4).
const PREFIX = new TextEncoder().encode('CompositeAlgorithmSignatures2025');
const LABEL = new TextEncoder().encode('COMPSIG-MLDSA65-Ed25519-SHA512');
const mPrime = (msg, ctx) => concat(PREFIX, LABEL, [ctx.length], ctx, sha512(msg));
const hybrid = {
  keygen(seed) {
    const pq = ml_dsa65.keygen(seed.subarray(0, 32));
    const edPk = ed25519.getPublicKey(seed.subarray(32));
    return { publicKey: concat(pq.publicKey, edPk), secretKey: concat(pq.secretKey, seed.subarray(32)) };
  },
  sign(msg, sk, { context = new Uint8Array(), extraEntropy } = {}) {
    const m = mPrime(msg, context);
    const pqSig = ml_dsa65.sign(m, sk.subarray(0, 4032), { context: LABEL, extraEntropy });
    return concat(pqSig, ed25519.sign(m, sk.subarray(4032)));
  },
  verify(sig, msg, pk, { context = new Uint8Array() } = {}) {
    if (sig.length !== 3309 + 64) return false;
    const m = mPrime(msg, context);
    let ok = false;
    try {
      ok = ml_dsa65.verify(sig.subarray(0, 3309), m, pk.subarray(0, 1952), { context: LABEL }) &&
        ed25519.verify(sig.subarray(3309), m, pk.subarray(1952));
    } catch {
      ok = false;
    }
    return ok;
  },
};

// Noble's Ed25519 has no context and no signing randomness; its API is adapted to the others'.
const ed = {
  keygen: (seed) => ({ publicKey: ed25519.getPublicKey(seed), secretKey: seed }),
  sign: (msg, sk) => ed25519.sign(msg, sk),
  verify: (sig, msg, pk) => {
    try {
      return ed25519.verify(sig, msg, pk);
    } catch {
      return false;
    }
  },
};

const nobleVerifies = (alg, sig, msg, pk, ctx) => {
  try {
    return alg.noble.verify(sig, msg, pk, alg.maxCtx > 0 ? { context: ctx } : undefined);
  } catch {
    return false;
  }
};

const ALGS = [
  { name: 'ML-DSA-44', noble: ml_dsa44, seedLen: 32, maxCtx: 255, rnd: true },
  { name: 'ML-DSA-65', noble: ml_dsa65, seedLen: 32, maxCtx: 255, rnd: true },
  { name: 'ML-DSA-87', noble: ml_dsa87, seedLen: 32, maxCtx: 255, rnd: true },
  { name: 'Ed25519', noble: ed, seedLen: 32, maxCtx: 0, rnd: false },
  { name: 'ML-DSA-65+Ed25519', noble: hybrid, seedLen: 64, maxCtx: 255, rnd: true },
];

for (const alg of ALGS) {
  test(`${alg.name} agrees with noble on ${SEEDS} random seeds`, () => {
    for (let i = 0; i < SEEDS; i++) {
      const seed = randomBytes(alg.seedLen);
      const msg = randomBytes(randomInt(0, 200));
      const ctx = alg.maxCtx > 0 ? randomBytes(i % 5 === 0 ? 255 : randomInt(0, 40)) : new Uint8Array();
      const where = `${alg.name} seed=${hex(seed)} msg=${hex(msg)} ctx=${hex(ctx)}`;
      const opts = (extra) => (alg.maxCtx > 0 ? { context: ctx, ...extra } : extra);

      // Keys from the same seed.
      const ours = pqot('keygen', '--alg', alg.name, '--seed', hex(seed));
      const theirs = alg.noble.keygen(seed);
      assert.equal(ours.pk, hex(theirs.publicKey), `pk differs: ${where}`);
      assert.equal(ours.sk, hex(theirs.secretKey), `sk differs: ${where}`);

      // Deterministic signatures, and signatures with an explicit rnd, byte for byte.
      const ourDet = pqotSign(alg.name, bytes(ours.sk), msg, ctx, 'deterministic');
      const theirDet = alg.noble.sign(msg, theirs.secretKey, opts({ extraEntropy: false }));
      assert.equal(hex(ourDet), hex(theirDet), `deterministic signature differs: ${where}`);
      if (alg.rnd) {
        const rnd = randomBytes(32);
        const ourRnd = pqotSign(alg.name, bytes(ours.sk), msg, ctx, new Uint8Array(rnd));
        const theirRnd = alg.noble.sign(msg, theirs.secretKey, opts({ extraEntropy: rnd }));
        assert.equal(hex(ourRnd), hex(theirRnd), `signature with rnd differs: ${where} rnd=${hex(rnd)}`);
      }

      // Hedged signatures cross over both ways.
      const ourHedged = pqotSign(alg.name, bytes(ours.sk), msg, ctx, 'hedged');
      assert.ok(nobleVerifies(alg, ourHedged, msg, theirs.publicKey, ctx), `noble refuses ours: ${where}`);
      const theirHedged = alg.noble.sign(msg, theirs.secretKey, opts({}));
      assert.ok(pqotVerifies(alg.name, theirs.publicKey, msg, ctx, theirHedged), `pqot refuses noble's: ${where}`);

      // Mutations: a flipped signature bit, a changed message, a changed context.
      if (i % 4 === 0) {
        const badSig = new Uint8Array(theirHedged);
        badSig[randomInt(0, badSig.length)] ^= 1 << randomInt(0, 8);
        assert.equal(pqotVerifies(alg.name, theirs.publicKey, msg, ctx, badSig), false, `pqot accepts a mutated signature: ${where}`);
        assert.equal(nobleVerifies(alg, badSig, msg, theirs.publicKey, ctx), false, `noble accepts a mutated signature: ${where}`);
        const badMsg = concat(msg, [0]);
        assert.equal(pqotVerifies(alg.name, theirs.publicKey, badMsg, ctx, ourHedged), false, `pqot accepts another message: ${where}`);
        assert.equal(nobleVerifies(alg, ourHedged, badMsg, theirs.publicKey, ctx), false, `noble accepts another message: ${where}`);
        if (alg.maxCtx > 0) {
          const badCtx = ctx.length > 0 ? ctx.subarray(1) : new Uint8Array([0]);
          assert.equal(pqotVerifies(alg.name, theirs.publicKey, msg, badCtx, ourHedged), false, `pqot accepts another context: ${where}`);
          assert.equal(nobleVerifies(alg, ourHedged, msg, theirs.publicKey, badCtx), false, `noble accepts another context: ${where}`);
        }
      }
    }
  });
}
