// Live cross-check of `pqot kem` against @noble/post-quantum (pinned in package-lock.json), an
// independent implementation: for random seeds, keygen, encaps and decaps agree byte for byte,
// and keys and ciphertexts cross over in both directions. Run by CTest (PQOT_BIN = the CLI).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ml_kem512, ml_kem768, ml_kem1024 } from '@noble/post-quantum/ml-kem.js';
import { ml_kem768_x25519 } from '@noble/post-quantum/hybrid.js';

const PQOT = process.env.PQOT_BIN;
const SEEDS = Number(process.env.PQOT_INTEROP_SEEDS ?? 200);

const hex = (u8) => Buffer.from(u8).toString('hex');
const bytes = (h) => new Uint8Array(Buffer.from(h, 'hex'));

// Runs `pqot kem ...` and parses its `name=hex` lines.
function pqot(...args) {
  const out = execFileSync(PQOT, ['kem', ...args], { encoding: 'utf8' });
  const fields = {};
  for (const line of out.trim().split('\n')) {
    const [k, v] = line.split('=');
    fields[k] = v;
  }
  return fields;
}

const ALGS = [
  { name: 'ML-KEM-512', noble: ml_kem512, seedLen: 64, msgLen: 32 },
  { name: 'ML-KEM-768', noble: ml_kem768, seedLen: 64, msgLen: 32 },
  { name: 'ML-KEM-1024', noble: ml_kem1024, seedLen: 64, msgLen: 32 },
  { name: 'X-Wing', noble: ml_kem768_x25519, seedLen: 32, msgLen: 64 },
];

assert.ok(PQOT, 'PQOT_BIN must name the pqot binary');

for (const alg of ALGS) {
  test(`${alg.name} agrees with @noble/post-quantum on ${SEEDS} random seeds`, () => {
    for (let i = 0; i < SEEDS; i++) {
      const seed = randomBytes(alg.seedLen);
      const ctx = `${alg.name} seed=${hex(seed)}`;

      // keygen from the same seed
      const ours = pqot('keygen', '--alg', alg.name, '--seed', hex(seed));
      const theirs = alg.noble.keygen(seed);
      assert.equal(ours.ek, hex(theirs.publicKey), `ek differs: ${ctx}`);
      assert.equal(ours.dk, hex(theirs.secretKey), `dk differs: ${ctx}`);

      // encaps with the same randomness
      const m = randomBytes(alg.msgLen);
      const ourEnc = pqot('encaps', '--alg', alg.name, '--ek', ours.ek, '--m', hex(m));
      const theirEnc = alg.noble.encapsulate(theirs.publicKey, m);
      assert.equal(ourEnc.ct, hex(theirEnc.cipherText), `ct differs: ${ctx} m=${hex(m)}`);
      assert.equal(ourEnc.ss, hex(theirEnc.sharedSecret), `ss differs: ${ctx} m=${hex(m)}`);

      // our ek into their encaps (their own randomness), their ct into our decaps
      const theirs2 = alg.noble.encapsulate(bytes(ours.ek));
      const ourDec = pqot('decaps', '--alg', alg.name, '--dk', ours.dk, '--ct', hex(theirs2.cipherText));
      assert.equal(ourDec.ss, hex(theirs2.sharedSecret), `our decaps of their ct: ${ctx}`);

      // their ek into our encaps (our CSPRNG), our ct into their decaps
      const ourEnc2 = pqot('encaps', '--alg', alg.name, '--ek', hex(theirs.publicKey));
      const theirDec = alg.noble.decapsulate(bytes(ourEnc2.ct), theirs.secretKey);
      assert.equal(hex(theirDec), ourEnc2.ss, `their decaps of our ct: ${ctx}`);

      // a random ciphertext: both take the implicit-rejection path to the same key
      if (alg.name.startsWith('ML-KEM') && i % 4 === 0) {
        const junk = randomBytes(theirEnc.cipherText.length);
        const ourRej = pqot('decaps', '--alg', alg.name, '--dk', ours.dk, '--ct', hex(junk));
        assert.equal(ourRej.ss, hex(alg.noble.decapsulate(junk, theirs.secretKey)),
          `implicit rejection differs: ${ctx} ct=${hex(junk)}`);
      }
    }
  });
}
