// A stand-in WebSocket server for client tests without the real one (RFC 6455's handshake and its
// unfragmented text frames, no extension): each message the client sends is handed to `answer`, which
// may reply, stay silent, or end the connection. Enough to play a protocol's every answer, right or wrong.
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface StandInConnection {
  send(text: string): void;
  /** Ends the TCP connection without a close frame (a server that died). */
  drop(): void;
}

export interface StandInServer {
  readonly url: string;
  close(): Promise<void>;
}

/** One text frame from the server (unmasked). */
function frame(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  const head =
    body.length < 126 ? Buffer.from([0x81, body.length]) : body.length < 65536 ? Buffer.from([0x81, 126, body.length >> 8, body.length & 255]) : undefined;
  if (!head) throw new Error('standInWebSocket: a message over 64 KiB');
  return Buffer.concat([head, body]);
}

/** The complete client frames at the start of `buf` (masked, as a client sends them): their opcodes and texts, and the rest. */
function readFrames(buf: Buffer): { frames: { op: number; text: string }[]; rest: Buffer } {
  const frames: { op: number; text: string }[] = [];
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    const op = buf[at]! & 0x0f;
    let len = buf[at + 1]! & 0x7f;
    let off = at + 2;
    if (len === 126) {
      if (buf.length - at < 4) break;
      len = buf.readUInt16BE(at + 2);
      off = at + 4;
    } else if (len === 127) {
      if (buf.length - at < 10) break;
      len = Number(buf.readBigUInt64BE(at + 2));
      off = at + 10;
    }
    if (buf.length < off + 4 + len) break;
    const mask = buf.subarray(off, off + 4);
    const data = Buffer.from(buf.subarray(off + 4, off + 4 + len));
    for (let i = 0; i < data.length; i++) data[i]! ^= mask[i % 4]!;
    frames.push({ op, text: data.toString('utf8') });
    at = off + 4 + len;
  }
  return { frames, rest: buf.subarray(at) };
}

/** Starts the stand-in on loopback; `answer` sees each text message the client sends, `connected` each connection as it opens. */
export function standInWebSocket(answer: (message: string, c: StandInConnection) => void, connected?: (c: StandInConnection) => void): Promise<StandInServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket: Socket) => {
    sockets.add(socket);
    const accept = crypto
      .createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    const c: StandInConnection = { send: (text) => socket.write(frame(text)), drop: () => socket.destroy() };
    connected?.(c);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      const { frames, rest } = readFrames(Buffer.concat([pending, d]));
      pending = rest;
      for (const f of frames) {
        if (f.op === 0x8) {
          socket.end(Buffer.from([0x88, 0]));
          return;
        }
        if (f.op === 0x1) answer(f.text, c);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
