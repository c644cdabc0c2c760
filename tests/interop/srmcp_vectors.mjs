// Known-answer vectors for SRMCP v2, computed from docs/srmcp.md alone (not from the C++ code):
// node:crypto for SHA-256, HMAC, HKDF (RFC 5869, written out below) and AES-256-GCM, and
// @noble/post-quantum for ML-KEM-768. Section numbers (§n) are those of docs/srmcp.md.
//
//   NODE_PATH=node_modules node tests/interop/srmcp_vectors.mjs --write
//     rewrites tests/data/srmcp/kat.json and Appendix A at the end of docs/srmcp.md
//   NODE_PATH=node_modules node tests/interop/srmcp_vectors.mjs [--json | --markdown]
//     prints them instead
//
// tests/interop/srmcp_kat.test.mjs checks that both files equal what this script produces;
// tests/unit/srmcp_kat_test.cpp checks the library against the JSON.
import { createCipheriv, createHash, createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ml_kem768 } from '@noble/post-quantum/ml-kem.js';

import { compactMarkdown, compactVectors } from './srmcp_compact_vectors.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const JSON_PATH = 'tests/data/srmcp/kat.json';
export const DOC_PATH = 'docs/srmcp.md';
export const APPENDIX_TITLE = '## Appendix A. Known-answer vectors';

// ---- bytes -------------------------------------------------------------------------------------

const cat = (...parts) => Buffer.concat(parts.map((p) => Buffer.from(p)));
const ascii = (s) => Buffer.from(s, 'ascii');
const hex = (b) => Buffer.from(b).toString('hex');
const range = (first, n) => Buffer.from(Array.from({ length: n }, (_, i) => (first + i) & 0xff));
const u8 = (v) => Buffer.from([v]);
const u16 = (v) => { const b = Buffer.alloc(2); b.writeUInt16BE(v); return b; };
const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); return b; };
const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(v)); return b; };

// ---- primitives ----------------------------------------------------------------------------------

const sha256 = (...parts) => createHash('sha256').update(cat(...parts)).digest();
const hmac = (key, ...parts) => createHmac('sha256', key).update(cat(...parts)).digest();
// RFC 5869 §2.2 and §2.3.
const hkdfExtract = (salt, ikm) => hmac(salt, ikm);
function hkdfExpand(prk, info, length) {
  let t = Buffer.alloc(0);
  let okm = Buffer.alloc(0);
  for (let i = 1; okm.length < length; i++) {
    t = hmac(prk, t, info, u8(i));
    okm = cat(okm, t);
  }
  return okm.subarray(0, length);
}
function aesGcmSeal(key, nonce, aad, plaintext) {
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(aad);
  return cat(c.update(plaintext), c.final(), c.getAuthTag());
}

// ---- §5, §6, §7 ----------------------------------------------------------------------------------

const LABELS = { c2s_msg: 'c2s msg', s2c_msg: 's2c msg', c2s_frame: 'c2s frame', s2c_frame: 's2c frame', link: 'link' };
const info = (label, th) => cat(ascii(`srmcp2 ${label}`), th);

function keySchedule(exporter, kemSecret, th) {
  const prk = hkdfExtract(exporter, kemSecret);
  const keys = {};
  for (const [name, label] of Object.entries(LABELS)) keys[name] = hkdfExpand(prk, info(label, th), 32);
  return { prk, keys };
}
const UPDATE_INFO = ascii('srmcp2 key update');
const nextEpoch = (keys) => Object.fromEntries(
  ['c2s_frame', 'c2s_msg', 's2c_frame', 's2c_msg'].map((n) => [n, hkdfExpand(keys[n], UPDATE_INFO, 32)]));

const bindInput = (token, linkId, linkExporter) => cat(ascii('srmcp2 bind'), token, u32(linkId), linkExporter);

// §6 nonce prefixes.
const framePrefix = (dir, linkId) => u32(((dir === 's2c' ? 0x80000000 : 0) | linkId) >>> 0);
const messagePrefix = (dir) => u32(dir === 's2c' ? 0x4d000001 : 0x4d000000);
const nonce = (prefix, counter) => cat(prefix, u64(counter));

// ---- §3, §4, §8.2, §9 layouts ---------------------------------------------------------------------

const FRAME = { client_hello: 1, server_hello: 2, sealed: 16, link_bind: 17, link_ready: 18 };
const frameHeader = (type, linkId, seq, epoch) => cat(u8(2), u8(type), u16(0), u32(linkId), u64(seq), u32(epoch), Buffer.alloc(12));
const preHeader = (bodyLen) => cat(u32(32), u32(bodyLen));

function clientHelloBody(h) {
  return cat(u8(h.versions.length), ...h.versions.map(u8), u8(h.kems.length), ...h.kems.map(u16),
    u16(h.kem), u16(h.ek.length), h.ek, h.client_random);
}
function serverHelloBody(h) {
  return cat(u8(2), u16(h.kem), u16(h.ct.length), h.ct, h.server_random, u64(h.session_id),
    u32(h.max_frame_body), u16(h.max_links), u32(h.key_update_messages), u32(h.key_update_seconds),
    u32(h.timestamp_window_ms));
}
const messageHeader = (m) => cat(u8(m.type), u8(m.response ? 1 : 0), u16(m.status), u32(m.tid), u64(m.msg_seq),
  u32(m.epoch), u32(m.timestamp_s));
const segmentHeader = (s) => cat(u32(s.tid), u64(s.msg_seq), u16(s.index), u16(s.count), u32(s.total), u32(s.offset));
// §8.2: each segment but the last is total / count rounded down; the last takes the rest.
const segmentSpan = (total, count, index) => {
  const base = Math.floor(total / count);
  return [base * index, index + 1 === count ? total - base * index : base];
};

// ---- the vectors ---------------------------------------------------------------------------------

const T = 1767225600; // 2026-01-01T00:00:00Z

function keyScheduleVector() {
  const exporter = range(0x00, 32), kemSecret = range(0x20, 32), th = range(0x40, 32);
  const { prk, keys } = keySchedule(exporter, kemSecret, th);
  return {
    exporter: hex(exporter), kem_secret: hex(kemSecret), transcript_hash: hex(th), prk: hex(prk),
    info_c2s_msg: hex(info(LABELS.c2s_msg, th)),
    keys: mapHex(keys), next_epoch: mapHex(nextEpoch(keys)),
  };
}

function linkBindProofVector() {
  const linkKey = range(0x60, 32), token = range(0x80, 32), linkId = 7, linkExporter = range(0xa0, 32);
  const input = bindInput(token, linkId, linkExporter);
  return { link_key: hex(linkKey), token: hex(token), link_id: linkId, link_exporter: hex(linkExporter),
    hmac_input: hex(input), proof: hex(hmac(linkKey, input)) };
}

function sessionVector() {
  const inp = {
    mlkem768_seed: range(0x00, 64), encaps_m: range(0x40, 32), client_random: range(0x60, 32),
    server_random: range(0x80, 32), session_id: 0x0123456789abcdefn, exporter: range(0xa0, 32),
    link_exporter: range(0xc0, 32), token: range(0xe0, 32), link_id: 1, port: 28001,
    max_frame_body: 65536, max_links: 8, key_update_messages: 3, key_update_seconds: 3600,
    timestamp_window_ms: 30000, identity: 'client1', roles: ['operator'],
  };
  const { publicKey: ek, secretKey: dk } = ml_kem768.keygen(inp.mlkem768_seed);
  const { cipherText: ct, sharedSecret: ss } = ml_kem768.encapsulate(ek, inp.encaps_m);
  if (hex(ml_kem768.decapsulate(ct, dk)) !== hex(ss)) throw new Error('ML-KEM round trip');

  const ch = clientHelloBody({ versions: [2], kems: [1, 3], kem: 1, ek, client_random: inp.client_random });
  const sh = serverHelloBody({ kem: 1, ct, ...inp });
  const th = sha256(ch, sh);
  const { prk, keys } = keySchedule(inp.exporter, ss, th);
  const epochs = [keys, nextEpoch(keys)];
  const sid = inp.session_id.toString(16).padStart(16, '0');

  // Messages (§9), in the order each side seals them. With key_update_messages = 3 each side
  // seals its 4th message at epoch 1 (§6).
  const M = (name, dir, type, response, status, tid, epoch, ts, body) => ({ name, dir, type, response, status, tid, epoch, timestamp_s: ts, body });
  const messages = [
    M('SESSION_READY', 's2c', 0x01, true, 0, 0, 0, T,
      `{"identity":"${inp.identity}","max_nodes_per_request":256,"roles":["operator"],"session_id":"${sid}"}`),
    M('READ request', 'c2s', 0x11, false, 0, 1, 0, T, '{"ids":["plant.t0"]}'),
    M('READ response', 's2c', 0x11, true, 0, 1, 0, T,
      '{"values":[{"id":"plant.t0","status":0,"ts_ms":1767225599750,"type":"double","value":21.5}]}'),
    M('LINK_REQUEST request', 'c2s', 0x20, false, 0, 2, 0, T, '{}'),
    M('LINK_REQUEST response (LINK_OFFER)', 's2c', 0x20, true, 0, 2, 0, T,
      `{"expires_ms":5000,"link_id":${inp.link_id},"port":${inp.port},"token":"${hex(inp.token)}"}`),
    M('READ request', 'c2s', 0x11, false, 0, 3, 0, T + 1, '{"ids":["plant.t0","plant.nope"]}'),
    M('READ response', 's2c', 0x11, true, 0, 3, 1, T + 1,
      '{"values":[{"id":"plant.t0","status":0,"ts_ms":1767225600750,"type":"double","value":21.25},' +
      '{"id":"plant.nope","status":2,"ts_ms":1767225601000}]}'),
    M('UNSUBSCRIBE request', 'c2s', 0x14, false, 0, 4, 1, T + 1, '{"subscription":9}'),
    M('ERROR (UNKNOWN_SUBSCRIPTION)', 's2c', 0x7f, true, 14, 4, 1, T + 1, '{"message":"no such subscription"}'),
  ];
  const msgSeq = { c2s: 0, s2c: 0 };
  for (const m of messages) {
    m.msg_seq = msgSeq[m.dir]++;
    m.header = messageHeader(m);
    m.nonce = nonce(messagePrefix(m.dir), m.msg_seq);
    m.sealed = cat(m.header, aesGcmSeal(epochs[m.epoch][`${m.dir}_msg`], m.nonce, m.header, ascii(m.body)));
  }

  // Frames (§3) in sending order; seq counts per link and direction.
  const frameSeq = {};
  const frames = [];
  const sealed = (name, dir, linkId, type, epoch, key, keyName, plaintext, segment) => {
    const slot = `${dir}/${linkId}`;
    const seq = frameSeq[slot] ?? 0;
    frameSeq[slot] = seq + 1;
    const header = frameHeader(type, linkId, seq, epoch);
    const n = nonce(framePrefix(dir, linkId), seq);
    const aad = cat(preHeader(plaintext.length + 16), header);
    frames.push({ name, dir, link_id: linkId, seq, epoch, type, key: keyName, nonce: n, plaintext, segment,
      frame: cat(aad, aesGcmSeal(key, n, aad, plaintext)) });
  };
  const segments = (mi, links) => {
    const m = messages[mi];
    links.forEach((linkId, index) => {
      const [offset, size] = segmentSpan(m.sealed.length, links.length, index);
      const s = { message: mi, tid: m.tid, msg_seq: m.msg_seq, index, count: links.length, total: m.sealed.length, offset };
      const keyName = `${m.dir}_frame`;
      sealed(`${m.name}, segment ${index + 1}/${links.length}`, m.dir, linkId, FRAME.sealed, m.epoch,
        epochs[m.epoch][keyName], keyName, cat(segmentHeader(s), m.sealed.subarray(offset, offset + size)), s);
    });
  };
  segments(0, [0]);
  segments(1, [0]);
  segments(2, [0]);
  segments(3, [0]);
  segments(4, [0]);
  const proofInput = bindInput(inp.token, inp.link_id, inp.link_exporter);
  const proof = hmac(keys.link, proofInput);
  sealed('LINK_BIND', 'c2s', inp.link_id, FRAME.link_bind, 0, keys.link, 'link', cat(u64(inp.session_id), proof));
  sealed('LINK_READY', 's2c', inp.link_id, FRAME.link_ready, 0, keys.s2c_frame, 's2c_frame', u64(inp.session_id));
  segments(5, [1]);
  segments(6, [1, 0]);
  segments(7, [0]);
  segments(8, [0]);

  return {
    inputs: {
      mlkem768_seed: hex(inp.mlkem768_seed), encaps_m: hex(inp.encaps_m), client_random: hex(inp.client_random),
      server_random: hex(inp.server_random), session_id: sid, exporter: hex(inp.exporter),
      link_exporter: hex(inp.link_exporter), token: hex(inp.token), link_id: inp.link_id, port: inp.port,
      max_frame_body: inp.max_frame_body, max_links: inp.max_links, key_update_messages: inp.key_update_messages,
      key_update_seconds: inp.key_update_seconds, timestamp_window_ms: inp.timestamp_window_ms,
      identity: inp.identity, roles: inp.roles,
    },
    ek: hex(ek), dk_sha256: hex(sha256(dk)), ct: hex(ct), shared_secret: hex(ss),
    client_hello: { versions: [2], kems: [1, 3], kem: 1, body: hex(ch), frame: hex(cat(preHeader(ch.length), frameHeader(FRAME.client_hello, 0, 0, 0), ch)) },
    server_hello: { body: hex(sh), frame: hex(cat(preHeader(sh.length), frameHeader(FRAME.server_hello, 0, 0, 0), sh)) },
    transcript_hash: hex(th), prk: hex(prk), keys: mapHex(keys), next_epoch: mapHex(epochs[1]),
    link_bind: { hmac_input: hex(proofInput), proof: hex(proof) },
    messages: messages.map((m) => ({ name: m.name, direction: m.dir, type: m.type, response: m.response,
      status: m.status, tid: m.tid, msg_seq: m.msg_seq, epoch: m.epoch, timestamp_s: m.timestamp_s,
      body_text: m.body, header: hex(m.header), nonce: hex(m.nonce), sealed: hex(m.sealed) })),
    frames: frames.map((f) => ({ name: f.name, direction: f.dir, link_id: f.link_id, seq: f.seq, epoch: f.epoch,
      type: f.type, key: f.key, nonce: hex(f.nonce), ...(f.segment ? { segment: f.segment } : {}),
      plaintext: hex(f.plaintext), frame: hex(f.frame) })),
  };
}

function mapHex(o) { return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, hex(v)])); }

export function vectors() {
  return {
    about: 'SRMCP v2 known-answer vectors (docs/srmcp.md, Appendix A). Generated by tests/interop/srmcp_vectors.mjs ' +
      'from the specification alone; do not edit by hand. TLS exporters and timestamps are fixed inputs.',
    regenerate: 'NODE_PATH=node_modules node tests/interop/srmcp_vectors.mjs --write',
    key_schedule: keyScheduleVector(),
    link_bind_proof: linkBindProofVector(),
    session: sessionVector(),
    compact: compactVectors(),
  };
}

export const jsonText = (v = vectors()) => `${JSON.stringify(v, null, 2)}\n`;

// ---- Appendix A (Markdown) -------------------------------------------------------------------------

// 32 bytes a line, in groups of 4 bytes.
function wrap(h, indent = '') {
  const lines = [];
  for (let i = 0; i < h.length; i += 64) lines.push(indent + h.slice(i, i + 64).match(/.{1,8}/g).join(' '));
  return lines.join('\n');
}
const field = (name, h) => (h.length <= 64 ? `${name.padEnd(18)}${wrap(h)}` : `${name}\n${wrap(h, '  ')}`);
const block = (...lines) => ['```', ...lines, '```'].join('\n');

export function markdown(v = vectors()) {
  const k = v.key_schedule, p = v.link_bind_proof, s = v.session, i = s.inputs;
  const keyLines = (keys) => ['c2s_frame', 'c2s_msg', 's2c_frame', 's2c_msg', 'link']
    .filter((name) => keys[name]).map((name) => field(`${name.replace('_', ' ')} key`, keys[name]));
  const ch = Buffer.from(s.client_hello.body, 'hex'), sh = Buffer.from(s.server_hello.body, 'hex');
  const frameOf = (type) => s.frames.findIndex((f) => f.type === type);
  const segmentOf = (mi) => s.frames.findIndex((f) => f.segment?.message === mi);
  const out = [`${APPENDIX_TITLE}

These vectors fix every byte that a label, a key or a layout of §3-§9 determines. They were computed
from this specification alone by \`tests/interop/srmcp_vectors.mjs\` (Node.js \`node:crypto\` and
\`@noble/post-quantum\`, not the C++ code) and are stored in \`tests/data/srmcp/kat.json\`, which also
holds every value this appendix gives only as a SHA-256. \`tests/unit/srmcp_kat_test.cpp\`
(\`SrmcpKat.*\`) checks the library against the JSON; \`tests/interop/srmcp_kat.test.mjs\` checks the
JSON and this appendix against the generator. After a deliberate protocol change, regenerate both with
\`NODE_PATH=node_modules node tests/interop/srmcp_vectors.mjs --write\` (it rewrites this appendix,
from its title to the end of the file).

A TLS exporter cannot be reproduced outside its TLS session, so the vectors take the exporters
(\`EXPORTER-SRMCP-v2\` of the control connection, \`EXPORTER-SRMCP-v2-link\` of a data link) as fixed
inputs, like the randomness and the timestamps. Hex is in groups of 4 bytes, 32 bytes a line;
\`00..1f\` means the 32 bytes 0x00, 0x01, ..., 0x1f.

### A.1 Key schedule (§5) and key update (§6)

Inputs: exporter = \`00..1f\`, KEM shared secret = \`20..3f\`, TH = \`40..5f\`. The info of "c2s msg"
is the 14 ASCII bytes \`srmcp2 c2s msg\` followed by the 32 bytes of TH; the other labels likewise.

${block(field('PRK', k.prk), field('info "c2s msg"', k.info_c2s_msg), ...keyLines(k.keys))}

Epoch 1: each key = HKDF-Expand(its epoch-0 key, the 17 ASCII bytes \`srmcp2 key update\`, 32).

${block(...keyLines(k.next_epoch))}

### A.2 Link-binding proof (§7)

Inputs: link key = \`60..7f\`, token = \`80..9f\` (the raw 32 bytes, not their hex text),
link_id = ${p.link_id}, link exporter = \`a0..bf\`.

${block(field('HMAC input', p.hmac_input), field('proof', p.proof))}

### A.3 A whole session

Fixed randomness, from CLIENT_HELLO to an ERROR, with one data link and a key update in each
direction:

| input | value |
|---|---|
| ML-KEM-768 key generation seed d \\|\\| z; encapsulation randomness m | \`00..3f\` (64 bytes); \`40..5f\` |
| client_random; server_random; session_id | \`60..7f\`; \`80..9f\`; \`0x${i.session_id}\` |
| exporter of the control connection; of data link ${i.link_id} | \`a0..bf\`; \`c0..df\` |
| LINK_OFFER | link_id ${i.link_id}, port ${i.port}, token \`e0..ff\`, expires_ms 5000 |
| SERVER_HELLO parameters | max_frame_body ${i.max_frame_body}, max_links ${i.max_links}, key_update_messages ${i.key_update_messages}, key_update_seconds ${i.key_update_seconds}, timestamp_window_ms ${i.timestamp_window_ms} |
| client certificate | identity \`${i.identity}\`, roles \`${i.roles.join(', ')}\` |
| timestamp_s | ${T} (2026-01-01T00:00:00Z), later ${T + 1} |

**Handshake (§4).** CLIENT_HELLO (${ch.length} bytes) = \`${wrap(hex(ch.subarray(0, 9)))}\` || ek ||
client_random: versions [2], KEMs [1, 3], \`kem\` 1, \`ek_len\` 1184. SERVER_HELLO (${sh.length} bytes) =
\`${wrap(hex(sh.subarray(0, 5)))}\` || ct || server_random || the rest below. Each hello frame is the
pre-header and header (40 bytes, below) || body. TH covers the two bodies only.

${block(field('CLIENT_HELLO 0..39', s.client_hello.frame.slice(0, 80)), field('SERVER_HELLO 0..39', s.server_hello.frame.slice(0, 80)),
    field('SERVER_HELLO tail', hex(sh.subarray(5 + 1088 + 32))), field('SHA-256(ek)', sha256hex(s.ek)),
    field('SHA-256(ct)', sha256hex(s.ct)), field('shared secret', s.shared_secret),
    field('SHA-256(CH body)', sha256hex(s.client_hello.body)), field('SHA-256(SH body)', sha256hex(s.server_hello.body)),
    field('TH', s.transcript_hash), field('PRK', s.prk), ...keyLines(s.keys))}

Epoch 1 (§6):

${block(...keyLines(s.next_epoch))}

**Messages (§9)**, each sealed with the message key of its direction and epoch, nonce = message
prefix || msg_seq, aad = the header. Each side seals its 4th message at epoch 1 (key_update_messages
= 3). The bodies, exact UTF-8 text:

| # | dir | message | tid | msg_seq | epoch | body |
|---|---|---|---|---|---|---|
${s.messages.map((m, idx) => `| M${idx} | ${m.direction} | ${m.name}${m.status ? ` (status ${m.status})` : ''} | ${m.tid} | ${m.msg_seq} | ${m.epoch} | \`${m.body_text}\` |`).join('\n')}

**Frames (§3, §7, §8.2)**, in sending order. A SEALED frame's plaintext is a segment header (§8.2)
|| the segment's bytes of the sealed message; M${s.frames[segmentOf(6)].segment.message} is split into two segments on two links.

| # | dir | frame | link | seq | epoch | key | SHA-256(frame) |
|---|---|---|---|---|---|---|---|
${s.frames.map((f, idx) => `| F${idx} | ${f.direction} | ${f.name}${f.segment ? ` (M${f.segment.message})` : ''} | ${f.link_id} | ${f.seq} | ${f.epoch} | ${f.key.replace('_', ' ')} | \`${sha256hex(f.frame)}\` |`).join('\n')}

In full, the frames of SESSION_READY (M0), the first READ and its response (M1, M2), and LINK_BIND
and LINK_READY:
`];
  for (const mi of [0, 1, 2]) {
    const m = s.messages[mi], fi = segmentOf(mi), f = s.frames[fi];
    out.push(`${block(`M${mi} ${m.name}`, field('header', m.header), field('sealed message', m.sealed),
      `F${fi}`, field('nonce', f.nonce), field('segment header', f.plaintext.slice(0, 48)), field('frame', f.frame))}
`);
  }
  const bind = s.frames[frameOf(FRAME.link_bind)], ready = s.frames[frameOf(FRAME.link_ready)];
  out.push(`${block(`F${frameOf(FRAME.link_bind)} LINK_BIND`, field('HMAC input', s.link_bind.hmac_input),
    field('plaintext', bind.plaintext), field('nonce', bind.nonce), field('frame', bind.frame),
    `F${frameOf(FRAME.link_ready)} LINK_READY`, field('nonce', ready.nonce), field('frame', ready.frame))}
`);
  out.push(compactMarkdown(v.compact));
  return out.join('\n');
}

function sha256hex(h) { return hex(sha256(Buffer.from(h, 'hex'))); }

// The document with its Appendix A replaced by `appendix` (appended if it has none).
export function withAppendix(doc, appendix) {
  const at = doc.indexOf(APPENDIX_TITLE);
  const head = at < 0 ? `${doc.replace(/\n*$/, '')}\n\n` : doc.slice(0, at);
  return head + appendix;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const v = vectors();
  const arg = process.argv[2] ?? '--json';
  if (arg === '--json') process.stdout.write(jsonText(v));
  else if (arg === '--markdown') process.stdout.write(markdown(v));
  else if (arg === '--write') {
    writeFileSync(ROOT + JSON_PATH, jsonText(v));
    writeFileSync(ROOT + DOC_PATH, withAppendix(readFileSync(ROOT + DOC_PATH, 'utf8'), markdown(v)));
    console.log(`wrote ${JSON_PATH} and Appendix A of ${DOC_PATH}`);
  } else {
    console.error('usage: srmcp_vectors.mjs [--json | --markdown | --write]');
    process.exit(2);
  }
}
