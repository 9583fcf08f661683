/**
 * A TCP relay on loopback between a test server and its PostgreSQL, to cut one replica off from
 * the database while the others keep it: `freeze()` holds every byte in both directions (the
 * replica's statements hang, as across a broken network or on a stalled machine) and `thaw()`
 * delivers them. Nothing is faked: the bytes are PostgreSQL's own.
 */
import type { Socket } from "bun";

export interface TcpRelay {
  port: number;
  freeze(): void;
  thaw(): void;
  stop(): void;
}

interface Side {
  peer: Socket<Side> | null;
  /** Bytes for the peer while it is not connected yet or the relay is frozen. */
  held: Uint8Array[];
}

export function startTcpRelay(target: { hostname: string; port: number }): TcpRelay {
  let frozen = false;
  const sockets = new Set<Socket<Side>>();

  const pass = (from: Socket<Side>, chunk: Uint8Array) => {
    const copy = new Uint8Array(chunk);
    if (frozen || !from.data.peer) from.data.held.push(copy);
    else from.data.peer.write(copy);
  };
  const flush = (from: Socket<Side>) => {
    if (frozen || !from.data.peer) return;
    for (const chunk of from.data.held.splice(0)) from.data.peer.write(chunk);
  };

  const listener = Bun.listen<Side>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { peer: null, held: [] };
        sockets.add(client);
        void Bun.connect<Side>({
          hostname: target.hostname,
          port: target.port,
          socket: {
            open(upstream) {
              upstream.data = { peer: client, held: [] };
              sockets.add(upstream);
              client.data.peer = upstream;
              flush(client);
            },
            data: pass,
            close(upstream) {
              sockets.delete(upstream);
              client.end();
            },
            error(upstream) {
              upstream.end();
            },
          },
        }).catch(() => client.end());
      },
      data: pass,
      close(client) {
        sockets.delete(client);
        client.data.peer?.end();
      },
      error(client) {
        client.end();
      },
    },
  });

  return {
    port: listener.port,
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const socket of sockets) flush(socket);
    },
    stop() {
      listener.stop(true);
      for (const socket of sockets) socket.end();
    },
  };
}
