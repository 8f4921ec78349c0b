// Helpers for the end-to-end run: processes, polling, the fake provider's control API.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const started = Date.now();

export function log(...parts) {
  console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...parts);
}

/** Poll `check` until it returns something truthy (no fixed sleeps: the wait ends as soon as it holds). */
export async function until(what, check, { timeoutMs = 30000, intervalMs = 100 } = {}) {
  const end = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < end) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ''}`);
}

/** Whether keystrokes go to the chat's message input (the page has the focus, and the input has it in the page). */
export async function inputHasKeyboard(chat) {
  return chat.locator('body').evaluate(() => document.hasFocus() && document.activeElement?.id === 'input');
}

/** A free loopback port (inside a fresh network namespace nearly any port is free; this makes sure). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Start a process in its own process group, stdout and stderr to the file descriptor `output`. */
export function startProcess(command, args, options, output) {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', output, output] });
  child.exitInfo = null;
  child.once('exit', (code, signal) => {
    child.exitInfo = { code, signal };
  });
  return child;
}

/** Stop a process group started by {@link startProcess}: SIGTERM, then SIGKILL if it lingers. */
export async function stopProcess(child, timeoutMs = 5000) {
  if (!child || child.exitInfo) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  try {
    await until(`pid ${child.pid} to exit`, () => child.exitInfo, { timeoutMs, intervalMs: 50 });
  } catch {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

export async function readPortFile(path, child) {
  return until(`the fake provider's port file ${path}`, () => {
    if (child.exitInfo) throw new Error(`fake provider exited: ${JSON.stringify(child.exitInfo)}`);
    return existsSync(path) ? Number(readFileSync(path, 'utf8').trim()) : 0;
  }, { timeoutMs: 20000 });
}

/** The fake provider's JSON control API (tests/support/fake_provider/control.py). */
export class FakeProvider {
  constructor(port) {
    this.base = `http://127.0.0.1:${port}`;
  }

  async call(method, path, body) {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = await response.json();
    if (!response.ok) throw new Error(`${method} ${path} -> ${response.status} ${JSON.stringify(payload)}`);
    return payload;
  }

  script(steps) {
    return this.call('POST', '/_fake/script', steps);
  }

  release() {
    return this.call('POST', '/_fake/release', {});
  }

  /** Wait until the daemon's request reached a stall (the answer is visibly half-streamed). */
  waitForStalls(count) {
    return this.call('GET', `/_fake/state?wait_stalls=${count}&timeout=20`);
  }

  /** The requests the fake received so far (their JSON bodies are what the model saw). */
  async requests() {
    return (await this.call('GET', '/_fake/requests')).requests;
  }

  health() {
    return this.call('GET', '/_fake/health');
  }
}
