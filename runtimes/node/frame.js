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
        if (e.code === 'EAGAIN') continue;
        if (e.code === 'EOF') break;
        throw e;
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return Buffer.concat(chunks);
  }

  function reply(header, blobs) {
    const h = Buffer.from(JSON.stringify(header), 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(h.length, 0);
    const out = Buffer.concat([len, h].concat(blobs || []));
    let off = 0;
    while (off < out.length) off += fs.writeSync(1, out, off, out.length - off);
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

  return { readRequest, reply, fail };
})();
