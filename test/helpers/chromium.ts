import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/**
 * Headless Chromium (Debian's `chromium`) driven over the DevTools protocol on a pipe
 * (--remote-debugging-pipe: JSON messages ending in NUL on fds 3 and 4), so no port and no npm package.
 */

/** Flags that keep Chromium off the network and out of any profile: this machine has no internet. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
  '--remote-debugging-pipe',
];
const COMMAND_TIMEOUT_MS = 20_000;

/** The chromium executable on PATH (or /usr/bin), or null. */
export function findChromium(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin'];
  for (const name of ['chromium', 'chromium-browser'])
    for (const dir of dirs) {
      const path = join(dir, name);
      try {
        accessSync(path, constants.X_OK);
        return path;
      } catch {}
    }
  return null;
}

/** What a page did while it loaded: console messages and exceptions, and every URL it requested. */
export interface PageLog {
  console: { level: string; text: string }[];
  requests: string[];
}

export interface Browser {
  /** Opens `url` in a new tab of `width` CSS pixels, waits for its load event, and returns the tab. */
  open(url: string, width?: number): Promise<Page>;
  close(): Promise<void>;
}

export interface Page {
  log: PageLog;
  /** Evaluates an expression in the page and returns its value (JSON-serializable). */
  evaluate<T>(expression: string): Promise<T>;
  /** A PNG of the whole page. */
  screenshot(): Promise<Buffer>;
}

/** A DevTools protocol value: untyped JSON, read field by field as the protocol documents it. */
// biome-ignore lint/suspicious/noExplicitAny: the protocol's thousands of shapes are not worth typing for a test
type Cdp = any;
type Message = { id?: number; method?: string; params?: Cdp; result?: Cdp; error?: Cdp; sessionId?: string };

export async function launchChromium(executable: string): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'avalake-chromium-'));
  const child: ChildProcess = spawn(executable, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const input = child.stdio[3] as Writable;
  const output = child.stdio[4] as Readable;
  const pending = new Map<number, { resolve: (v: Cdp) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(m: Message) => void>();
  let nextId = 1;
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let end = buffer.indexOf('\0');
    while (end >= 0) {
      const message = JSON.parse(buffer.slice(0, end)) as Message;
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf('\0');
      if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`DevTools: ${JSON.stringify(message.error)}`));
        else waiter?.resolve(message.result);
      } else for (const listen of listeners) listen(message);
    }
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values())
      waiter.reject(new Error(`chromium exited (${code}) before answering; its stderr ends:\n${stderr}`));
    pending.clear();
  });

  const send = (method: string, params: object = {}, sessionId?: string): Promise<Cdp> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(
          new Error(`DevTools ${method}: no answer in ${COMMAND_TIMEOUT_MS} ms; stderr ends:\n${stderr}`),
        );
      }, COMMAND_TIMEOUT_MS);
      pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      input.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });

  return {
    async open(url, width = 1400) {
      const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      const log: PageLog = { console: [], requests: [] };
      let loaded: () => void = () => {};
      const load = new Promise<void>((resolve) => {
        loaded = resolve;
      });
      listeners.add((m) => {
        if (m.sessionId !== sessionId) return;
        if (m.method === 'Runtime.consoleAPICalled')
          log.console.push({
            level: m.params.type,
            text: (m.params.args as { value?: unknown; description?: string }[])
              .map((a) => String(a.value ?? a.description ?? ''))
              .join(' '),
          });
        else if (m.method === 'Runtime.exceptionThrown')
          log.console.push({
            level: 'exception',
            text: m.params.exceptionDetails?.exception?.description ?? '',
          });
        else if (m.method === 'Log.entryAdded')
          log.console.push({ level: m.params.entry.level, text: m.params.entry.text });
        else if (m.method === 'Network.requestWillBeSent') log.requests.push(m.params.request.url);
        else if (m.method === 'Page.loadEventFired') loaded();
      });
      for (const domain of ['Runtime', 'Log', 'Network', 'Page'])
        await send(`${domain}.enable`, {}, sessionId);
      await send(
        'Emulation.setDeviceMetricsOverride',
        { width, height: 900, deviceScaleFactor: 1, mobile: false },
        sessionId,
      );
      await send('Page.navigate', { url }, sessionId);
      await load;
      return {
        log,
        async evaluate<T>(expression: string): Promise<T> {
          const answer = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
          if (answer.exceptionDetails)
            throw new Error(`in the page: ${JSON.stringify(answer.exceptionDetails)}`);
          return answer.result.value as T;
        },
        async screenshot() {
          const { cssContentSize } = await send('Page.getLayoutMetrics', {}, sessionId);
          const clip = { x: 0, y: 0, width, height: Math.ceil(cssContentSize.height), scale: 1 };
          const { data } = await send(
            'Page.captureScreenshot',
            { format: 'png', captureBeyondViewport: true, clip },
            sessionId,
          );
          return Buffer.from(data as string, 'base64');
        },
      };
    },
    async close() {
      await send('Browser.close').catch(() => {});
      if (child.exitCode === null)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            resolve();
          }, 5000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
