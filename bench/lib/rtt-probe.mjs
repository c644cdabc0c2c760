// Round-trip-time probe, run by the harness inside the client namespace:
//   node bench/lib/rtt-probe.mjs HOST PORT COUNT
// Times COUNT TCP connects to a port nobody listens on: the SYN goes out, the RST comes back, so
// each attempt takes one network round trip plus the kernel's turnaround, and no server is
// involved. (No ping on the machine, and ICMP would not be what the protocols see anyway.)
// Prints {"samples_us": [...], "lost": k}; an attempt with no answer within 2 s counts as lost.

import net from "node:net";

const [host, portText, countText] = process.argv.slice(2);
const port = Number(portText);
const count = Number(countText ?? 21);
const TIMEOUT_MS = 2000;

function probeOnce() {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, TIMEOUT_MS);
    const done = (ok) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok ? Number(process.hrtime.bigint() - t0) / 1000 : null);
    };
    // ECONNREFUSED is the expected answer; a successful connect also took one round trip.
    socket.on("error", (e) => done(e.code === "ECONNREFUSED"));
    socket.on("connect", () => done(true));
  });
}

const samples = [];
let lost = 0;
for (let i = 0; i < count; i++) {
  const us = await probeOnce();
  if (us === null) lost++;
  else samples.push(Math.round(us * 10) / 10);
}
process.stdout.write(JSON.stringify({ samples_us: samples, lost }) + "\n");
