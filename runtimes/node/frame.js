// frame.js: the script side of the framed stdin/stdout protocol of
// onnxconv's Node runtimes (runtimes/node): a 4-byte little-endian length,
// a JSON header of that length, then raw bytes in header order. Put before
// a runner script, it defines `frame`.
'use strict';
const frame = (() => {
  const fs = require('fs');

  function readAll(fd) {
    const chunks = [];
    const buf = Buffer.alloc(1 << 16);
    for (;;) {
      let n;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN') { pause(); continue; }
        if (e.code === 'EOF') break;
        throw e;
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return Buffer.concat(chunks);
  }

  // pause waits a millisecond without spinning (a descriptor that is
  // non-blocking answered EAGAIN).
  const nap = new Int32Array(new SharedArrayBuffer(4));
  function pause() { Atomics.wait(nap, 0, 0, 1); }

  // reply writes one answer whole. Once anything touches process.stdout,
  // Node makes a pipe on fd 1 non-blocking, and a write to a full pipe
  // (the reader busy) fails with EAGAIN: that is waited out, never left
  // as half an answer, which would leave the reader waiting for the rest.
  function reply(header, blobs) {
    const h = Buffer.from(JSON.stringify(header), 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(h.length, 0);
    const out = Buffer.concat([len, h].concat(blobs || []));
    let off = 0;
    while (off < out.length) {
      try {
        off += fs.writeSync(1, out, off, out.length - off);
      } catch (e) {
        if (e.code !== 'EAGAIN') throw e;
        pause();
      }
    }
  }

  function fail(kind, error, extra) {
    reply(Object.assign({ ok: false, kind, error: String(error) }, extra || {}));
  }

  // readRequest reads the request on stdin: its header, and take(n) for
  // the next n bytes after it. null when the request is cut short (the
  // protocol error is then answered).
  function readRequest() {
    const req = readAll(0);
    if (req.length < 4) { fail('protocol', 'short request'); return null; }
    const hlen = req.readUInt32LE(0);
    if (hlen > req.length - 4) { fail('protocol', 'truncated request header'); return null; }
    const head = JSON.parse(req.subarray(4, 4 + hlen).toString('utf8'));
    let off = 4 + hlen;
    const take = (n) => {
      if (!(n >= 0) || off + n > req.length) throw new Error('truncated request body');
      const b = req.subarray(off, off + n);
      off += n;
      return b;
    };
    return { head, take };
  }

  // stream returns next(), which reads the next request of a stream of
  // requests on stdin (a runner that loads a model once and serves every
  // sample): a promise of {head, take(n)} (take returns the next n bytes),
  // or of null at the end of input. Waiting for a request costs no CPU.
  function stream() {
    const chunks = [];
    let have = 0;
    let ended = false;
    let wake = null;
    process.stdin.on('data', (c) => { chunks.push(c); have += c.length; if (wake) wake(); });
    process.stdin.on('end', () => { ended = true; if (wake) wake(); });
    process.stdin.on('error', () => { ended = true; if (wake) wake(); });
    async function readExact(n) {
      while (have < n) {
        if (ended) return null;
        await new Promise((r) => { wake = r; });
        wake = null;
      }
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      chunks.length = 0;
      const out = all.subarray(0, n);
      if (all.length > n) chunks.push(all.subarray(n));
      have -= n;
      return out;
    }
    return async function next() {
      const len = await readExact(4);
      if (len === null) return null;
      const h = await readExact(len.readUInt32LE(0));
      if (h === null) throw new Error('truncated request header');
      const head = JSON.parse(h.toString('utf8'));
      const parts = [];
      const take = (n) => {
        if (!(n >= 0)) throw new Error('bad size in request');
        const b = parts.shift();
        if (!b || b.length !== n) throw new Error('request body does not match its header');
        return b;
      };
      // The body's sizes are in the header, in order: (head.sizes).
      for (const n of head.sizes || []) {
        const b = await readExact(n);
        if (b === null) throw new Error('truncated request body');
        parts.push(b);
      }
      return { head, take };
    };
  }

  // failed answers a runner's uncaught failure and ends the process: the
  // runner's loop is gone, and a process that stayed alive (its stdin
  // keeps it so) would leave the next request unanswered.
  // The failure also goes to stderr, which the caller keeps: the answer
  // can be lost when the process ends before it is read.
  function failed(e) {
    const why = e && e.stack ? e.stack : String(e);
    try { fs.writeSync(2, `internal failure: ${why}\n`); } catch (_) { /* stderr gone: the answer still says it */ }
    try {
      fail('internal', why);
    } finally {
      process.exit(70);
    }
  }

  return { readRequest, reply, fail, failed, stream };
})();
