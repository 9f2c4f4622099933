/**
 * A private redis-server for the rate-limit tests, on a free port, with no
 * persistence, that a test can kill (SIGKILL) and start again on the same
 * port. When redis-server is not installed the tests are skipped on a
 * developer machine and fail under CI=true.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const installed = (): boolean => {
  const r = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return r.status === 0;
};

/** node:test options: skip when redis-server is missing, unless CI=true (then the tests run and fail). */
export function redisTestOptions(): { skip?: string } {
  if (process.env.CI === 'true' || installed()) return {};
  return { skip: 'redis-server is not installed' };
}

export async function freePort(): Promise<number> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as net.AddressInfo).port;
  srv.close();
  await once(srv, 'close');
  return port;
}

/** Whether a Redis server answers PING on `port`. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    const done = (ok: boolean): void => (s.destroy(), resolve(ok));
    s.setTimeout(500, () => done(false));
    s.on('error', () => done(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => ((got += d.toString()), got.includes('+PONG') && done(true)));
  });
}

export class RedisServer {
  private proc: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(port?: number): Promise<RedisServer> {
    const s = new RedisServer(port ?? (await freePort()));
    await s.start();
    return s;
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'];
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    this.proc = proc;
    proc.on('error', () => undefined);
    for (let i = 0; i < 250; i++) {
      if (await pings(this.port)) return;
      if (proc.exitCode !== null) break;
      await sleep(20);
    }
    proc.kill('SIGKILL');
    throw new Error(`redis-server did not start on port ${this.port}`);
  }

  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void {
    this.proc?.kill('SIGSTOP');
  }

  /** Lets a frozen server go on (SIGCONT). */
  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  /** Kills the server at once (SIGKILL) and waits for it to be gone. */
  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
    const exited = once(p, 'exit');
    p.kill('SIGKILL');
    await exited;
  }
}
