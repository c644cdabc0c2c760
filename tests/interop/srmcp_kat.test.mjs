// The SRMCP known-answer vectors (docs/srmcp.md Appendix A) are what srmcp_vectors.mjs computes
// from the specification: the stored JSON and the appendix must equal a fresh run, and the fresh
// run must hold together (ML-KEM round trip, every frame opens). Needs no pqot binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDecipheriv } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js';
import { APPENDIX_TITLE, DOC_PATH, JSON_PATH, ROOT, jsonText, markdown, vectors } from './srmcp_vectors.mjs';

const v = vectors();
const bytes = (h) => Buffer.from(h, 'hex');
const regenerate = 'regenerate with: NODE_PATH=node_modules node tests/interop/srmcp_vectors.mjs --write';

test(`${JSON_PATH} equals the generator's output`, () => {
  assert.equal(readFileSync(ROOT + JSON_PATH, 'utf8'), jsonText(v), regenerate);
});

test(`Appendix A of ${DOC_PATH} equals the generator's output`, () => {
  const doc = readFileSync(ROOT + DOC_PATH, 'utf8');
  const at = doc.indexOf(APPENDIX_TITLE);
  assert.ok(at >= 0, `${DOC_PATH} has no "${APPENDIX_TITLE}"`);
  assert.equal(doc.slice(at), markdown(v), regenerate);
});

test('generation is deterministic', () => {
  assert.equal(jsonText(vectors()), jsonText(v));
});

test('the session KEM values agree with ML-KEM-768 decapsulation', () => {
  const s = v.session;
  const { secretKey } = ml_kem768.keygen(bytes(s.inputs.mlkem768_seed));
  assert.equal(Buffer.from(ml_kem768.decapsulate(bytes(s.ct), secretKey)).toString('hex'), s.shared_secret);
});

// Opens every frame and message with the keys the vector names, as a receiver would.
test('every session frame and message opens with its stated key and nonce', () => {
  const s = v.session;
  const key = (dir, epoch, purpose) => bytes((epoch === 0 ? s.keys : s.next_epoch)[`${dir}_${purpose}`]);
  const open = (k, nonce, aad, sealed) => {
    const d = createDecipheriv('aes-256-gcm', k, nonce);
    d.setAAD(aad);
    d.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
  };
  const parts = new Map();
  for (const f of s.frames) {
    const frame = bytes(f.frame);
    const k = f.key === 'link' ? bytes(s.keys.link) : key(f.direction, f.epoch, 'frame');
    const plain = open(k, bytes(f.nonce), frame.subarray(0, 40), frame.subarray(40));
    assert.equal(plain.toString('hex'), f.plaintext, f.name);
    if (f.segment) parts.set(`${f.segment.message}/${f.segment.index}`, plain.subarray(24));
  }
  s.messages.forEach((m, i) => {
    const segs = [...parts.entries()].filter(([id]) => id.startsWith(`${i}/`)).map(([, p]) => p);
    const sealed = Buffer.concat(segs);
    assert.equal(sealed.toString('hex'), m.sealed, m.name);
    const body = open(key(m.direction, m.epoch, 'msg'), bytes(m.nonce), sealed.subarray(0, 24), sealed.subarray(24));
    assert.equal(body.toString('utf8'), m.body_text, m.name);
  });
});
