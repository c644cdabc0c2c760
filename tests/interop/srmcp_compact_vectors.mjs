// Known-answer vectors for SRMCP's compact bodies (docs/srmcp.md §9.2) and HELLO_REFUSED (§4),
// computed from the specification alone (not from the C++ code). srmcp_vectors.mjs puts them in
// tests/data/srmcp/kat.json ("compact") and in Appendix A.4; tests/unit/srmcp_kat_test.cpp
// encodes the same inputs with the library and decodes the malformed bodies.

const u8 = (v) => Buffer.from([v]);
const u16 = (v) => { const b = Buffer.alloc(2); b.writeUInt16BE(v); return b; };
const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); return b; };
const i64 = (v) => { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(v)); return b; };
const f64 = (v) => { const b = Buffer.alloc(8); b.writeDoubleBE(v); return b; };
const cat = (...parts) => Buffer.concat(parts);

// §9.2 type octets and §11 status codes (those the vectors use).
const TYPE = { none: 0, bool: 1, int64: 2, double: 3, string: 4, json: 5 };
const STATUS = { OK: 0, BAD_REQUEST: 1, UNKNOWN_NODE: 2, TYPE_MISMATCH: 3, NOT_READABLE: 5, TOO_LARGE: 7 };
const typeName = (octet) => Object.keys(TYPE).find((k) => TYPE[k] === octet);

const id = (s) => { const b = Buffer.from(s, 'ascii'); return cat(u8(b.length), b); };
const lengthPrefixed = (b) => cat(u32(b.length), b);
function value(type, v) {
  switch (type) {
    case TYPE.bool: return u8(v ? 1 : 0);
    case TYPE.int64: return i64(v);
    case TYPE.double: return f64(v);
    case TYPE.string: return lengthPrefixed(Buffer.from(v, 'utf8'));
    case TYPE.json: return lengthPrefixed(Buffer.from(JSON.stringify(v), 'utf8'));
    default: throw new Error(`no value of type ${type}`);
  }
}

const readRequest = (ids) => cat(u16(ids.length), ...ids.map(id));
const writeRequest = (values) => cat(u16(values.length), ...values.map((w) => cat(id(w.id), u8(w.type), value(w.type, w.value))));
const readEntry = (e) => cat(u16(e.status), u8(e.type), i64(e.ts_ms), e.status === STATUS.OK ? value(e.type, e.value) : Buffer.alloc(0));
const readResponse = (entries) => cat(u16(entries.length), ...entries.map(readEntry));
const writeEntry = (e) => cat(u16(e.status), e.status === STATUS.OK ? cat(u8(e.type), value(e.type, e.stored)) : Buffer.alloc(0));
const writeResponse = (entries) => cat(u16(entries.length), ...entries.map(writeEntry));
const notification = (subscription, entries) => cat(i64(subscription), u16(entries.length),
  ...entries.map((e) => cat(id(e.id), readEntry(e))));
const helloRefused = (r) => cat(u8(r.reason), u8(r.versions.length), ...r.versions.map(u8), u8(r.kems.length), ...r.kems.map(u16));

const TS = 1700000000000; // 2023-11-14T22:13:20Z

// Each vector: what it is, its inputs (for the library to encode or decode), and its bytes.
export function compactVectors() {
  const readIds = ['a', 'bb'];
  const readEntries = [
    { status: STATUS.OK, type: TYPE.int64, ts_ms: TS, value: 21 },
    { status: STATUS.UNKNOWN_NODE, type: TYPE.none, ts_ms: TS + 5 },
  ];
  const writes = [
    { id: 'b', type: TYPE.bool, value: true },
    { id: 's', type: TYPE.string, value: 'ä' },
    { id: 'd', type: TYPE.double, value: -0.25 },
    { id: 'j', type: TYPE.json, value: { k: [1, 2] } },
  ];
  const writeEntries = [{ status: STATUS.OK, type: TYPE.double, stored: -0.25 }, { status: STATUS.UNKNOWN_NODE }];
  const notifyEntries = [
    { id: 'a', status: STATUS.OK, type: TYPE.int64, ts_ms: TS + 1000, value: -1 },
    { id: 'z', status: STATUS.NOT_READABLE, type: TYPE.none, ts_ms: TS + 1001 },
  ];
  const refused = { reason: 1, versions: [3], kems: [1, 3] };
  const hex = (b) => b.toString('hex');
  return {
    read_request: { ids: readIds, body: hex(readRequest(readIds)) },
    read_response: { ids: readIds, entries: readEntries, body: hex(readResponse(readEntries)) },
    write_requests: writes.map((w) => ({ ...w, body: hex(writeRequest([w])) })),
    write_response: { ids: ['d', 'bb'], entries: writeEntries, body: hex(writeResponse(writeEntries)) },
    notification: { subscription: 7, entries: notifyEntries, body: hex(notification(7, notifyEntries)) },
    hello_refused: { ...refused, body: hex(helloRefused(refused)) },
    // Request bodies the server answers with the status given (max_nodes_per_request 64 or less).
    malformed: [
      { what: 'a bool of 2', request: 'write', body: '000101620102', status: STATUS.BAD_REQUEST },
      { what: 'type octet 7', request: 'write', body: '000101620701', status: STATUS.BAD_REQUEST },
      { what: 'invalid UTF-8', request: 'write', body: '000101730400000002' + '8080', status: STATUS.BAD_REQUEST },
      { what: 'a json scalar', request: 'write', body: '00010161050000000131', status: STATUS.BAD_REQUEST },
      { what: 'a count of 0', request: 'read', body: '0000', status: STATUS.BAD_REQUEST },
      { what: 'a count past the body', request: 'read', body: '00030161', status: STATUS.BAD_REQUEST },
      { what: 'a trailing byte', request: 'read', body: '00010161' + '00', status: STATUS.BAD_REQUEST },
      { what: '65,535 ids, over max_nodes_per_request', request: 'read', body: 'ffff0161', status: STATUS.TOO_LARGE },
    ],
  };
}

// ---- Appendix A.4 (Markdown) -----------------------------------------------------------------------

// Bytes in pairs, split where the record's fields are.
const spaced = (h) => h.match(/.{2}/g).join(' ');
const fields = (...parts) => parts.map((p) => spaced(p.toString('hex'))).join('  ');
const statusName = (code) => Object.keys(STATUS).find((k) => STATUS[k] === code);
const show = (v) => JSON.stringify(v);

export function compactMarkdown(c) {
  const lines = [];
  const add = (title, ...rows) => lines.push(title, ...rows.map((r) => `  ${r}`));
  add(`READ request, ids ${c.read_request.ids.map(show).join(', ')}`, fields(...splitRead(c.read_request.ids)));
  add(`READ response: ${c.read_response.entries.map((e, i) => `${show(c.read_response.ids[i])} ${entryText(e)}`).join('; ')}`,
    fields(u16(c.read_response.entries.length)), ...c.read_response.entries.map((e) => fields(...readEntryParts(e))));
  for (const w of c.write_requests) {
    add(`WRITE request, ${show(w.id)} := ${typeName(w.type)} ${show(w.value)}`,
      fields(u16(1), id(w.id), u8(w.type), value(w.type, w.value)));
  }
  add(`WRITE response to ${c.write_response.ids.map(show).join(', ')}: ${c.write_response.entries.map(writeText).join('; ')}`,
    fields(u16(c.write_response.entries.length)), ...c.write_response.entries.map((e) => fields(...writeEntryParts(e))));
  add(`NOTIFICATION, subscription ${c.notification.subscription}: ${c.notification.entries.map((e) => `${show(e.id)} ${entryText(e)}`).join('; ')}`,
    fields(i64(c.notification.subscription), u16(c.notification.entries.length)),
    ...c.notification.entries.map((e) => fields(id(e.id), ...readEntryParts(e))));
  const r = c.hello_refused;
  add(`HELLO_REFUSED: no common version; the server accepts versions [${r.versions}] and KEMs [${r.kems}]`,
    fields(u8(r.reason), cat(u8(r.versions.length), ...r.versions.map(u8)), cat(u8(r.kems.length), ...r.kems.map(u16))));
  const malformed = c.malformed.map((m) => `| ${m.request.toUpperCase()} | \`${spaced(m.body)}\` | ${m.what} | \`${statusName(m.status)}\` |`);
  return `### A.4 Compact bodies (§9.2) and HELLO_REFUSED (§4)

The inputs are in \`tests/data/srmcp/kat.json\` (\`compact\`); \`SrmcpKat.CompactBodies_A4\` encodes them
with the library and compares. Fields are separated by two spaces. ts_ms ${TS} is
2023-11-14T22:13:20Z; an entry of an unknown or unreadable node carries the time of the attempt.

\`\`\`
${lines.join('\n')}
\`\`\`

Malformed request bodies, and the status the server answers each with (any max_nodes_per_request
below 65,535):

| request | body | what is wrong | status |
|---|---|---|---|
${malformed.join('\n')}
`;
}

const splitRead = (ids) => [u16(ids.length), ...ids.map(id)];
const readEntryParts = (e) => [u16(e.status), u8(e.type), i64(e.ts_ms), ...(e.status === STATUS.OK ? [value(e.type, e.value)] : [])];
const writeEntryParts = (e) => [u16(e.status), ...(e.status === STATUS.OK ? [u8(e.type), value(e.type, e.stored)] : [])];
const entryText = (e) => (e.status === STATUS.OK ? `${typeName(e.type)} ${show(e.value)} at ts_ms ${e.ts_ms}` : `${statusName(e.status)} at ts_ms ${e.ts_ms}`);
const writeText = (e) => (e.status === STATUS.OK ? `OK, stored as ${typeName(e.type)} ${show(e.stored)}` : statusName(e.status));
