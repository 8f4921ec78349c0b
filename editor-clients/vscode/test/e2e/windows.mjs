// A second editor window on the same workspace: another `switchman serve` (what a second VS Code
// or Neovim window would start) shares the data folder. A turn sent there, and a sticky model set
// there with `/model`, show in this window's chat panel and status bar item without the user doing
// anything: this window's daemon notices the change and sends switchman/sessionChanged and
// switchman/status, and the panel reloads the transcript from it.
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { log, stopProcess, until } from './support.mjs';

const REQUEST_TIMEOUT = 30000;

/** A bare JSON-RPC client over a daemon's stdio: the LSP base protocol's framing, nothing more. */
class RawDaemon {
  constructor(command, env, logFile) {
    this.child = spawn(command, ['serve'], { env, detached: true, stdio: ['pipe', 'pipe', openSync(logFile, 'w')] });
    this.child.exitInfo = null;
    this.child.once('exit', (code, signal) => {
      this.child.exitInfo = { code, signal };
      for (const { reject } of this.pending.values()) reject(new Error(`the second daemon exited: ${JSON.stringify(this.child.exitInfo)}`));
      this.pending.clear();
    });
    this.buffer = Buffer.alloc(0);
    this.nextId = 1;
    this.pending = new Map();
    this.notifications = [];
    this.child.stdout.on('data', (chunk) => this.receive(chunk));
  }

  receive(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: *(\d+)/i.exec(this.buffer.subarray(0, end).toString('ascii'))?.[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.dispatch(message);
    }
  }

  dispatch(message) {
    if (message.method !== undefined && message.id !== undefined) {
      // The daemon asks its editor something (registerCapability, workDoneProgress/create): accept.
      this.send({ jsonrpc: '2.0', id: message.id, result: null });
    } else if (message.method !== undefined) {
      this.notifications.push(message);
    } else {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(`${waiting.method}: ${JSON.stringify(message.error)}`));
      else waiting?.resolve(message.result);
    }
  }

  send(message) {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the second daemon within ${REQUEST_TIMEOUT} ms`));
      }, REQUEST_TIMEOUT);
      const settle = (done) => (value) => {
        clearTimeout(timer);
        done(value);
      };
      this.pending.set(id, { method, resolve: settle(resolve), reject: settle(reject) });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  /** Shut down as an editor would; kill the process group if it does not exit. */
  async stop() {
    if (this.child.exitInfo) return;
    try {
      await this.request('shutdown', null);
      this.notify('exit', null);
      await until('the second daemon to exit', () => this.child.exitInfo, { timeoutMs: 5000, intervalMs: 50 });
    } catch {
      await stopProcess(this.child);
    }
  }
}

/** The second window's daemon, initialised like an editor with `workspace` open. */
async function secondWindow(daemon, workspace) {
  const second = new RawDaemon(daemon.switchman, daemon.env, join(daemon.logs, 'second-window-daemon.log'));
  const uri = pathToFileURL(workspace).href;
  await second.request('initialize', {
    processId: process.pid, clientInfo: { name: 'e2e second window' }, rootUri: uri,
    workspaceFolders: [{ uri, name: 'project' }], capabilities: {},
  });
  second.notify('initialized', {});
  return { second, uri };
}

export async function anotherWindowsTurnShowsInThePanel(ui, fake, workspace, daemon) {
  const chat = ui.chatFrame();
  const title = (await chat.locator('#session').innerText()).trim();
  const { second, uri } = await secondWindow(daemon, workspace);
  try {
    const message = 'what does login() return for other users?';
    const answer = 'It returns False for every user but admin.';
    await fake.script([{ kind: 'text', chunks: ['It returns **False** ', 'for every user but admin.'] }]);
    const turn = await second.request('switchman/chat', { workspace: uri, message });
    if (turn.kind !== 'turn' || turn.status !== 'completed') throw new Error(`the second window's turn: ${JSON.stringify(turn)}`);
    log('the second window\'s daemon answered in session', turn.session_id);
    // Nobody touches this window: its panel shows the other window's message and answer, in the same session.
    await chat.locator('.entry.user', { hasText: message }).waitFor();
    const shown = chat.locator(`.entry.turn[data-turn="${turn.turn_id}"][data-status="completed"]`);
    await shown.locator('.markdown strong', { hasText: 'False' }).waitFor();
    if ((await shown.locator('.markdown').innerText()).trim() !== answer) {
      throw new Error(`the other window's answer shows as ${JSON.stringify(await shown.locator('.markdown').innerText())}`);
    }
    await chat.locator('#session', { hasText: title }).waitFor();
    log('the other window\'s turn showed in the panel:', JSON.stringify(await shown.locator('.markdown').innerText()));
    await ui.shot('chat-another-windows-turn', shown);

    // A sticky model set in the other window shows in this window's status bar item, and so does its clearing.
    const pinned = await second.request('switchman/chat', { workspace: uri, message: '/model opus' });
    if (!pinned.text.startsWith('Sticky model set')) throw new Error(`/model opus: ${JSON.stringify(pinned)}`);
    await ui.statusItem().filter({ hasText: 'opus' }).locator('.codicon-pinned').waitFor();
    log('status bar after /model opus in the other window:', JSON.stringify(await ui.statusItem().innerText()));
    const cleared = await second.request('switchman/chat', { workspace: uri, message: '/model -' });
    if (!cleared.text.startsWith('Sticky model cleared')) throw new Error(`/model -: ${JSON.stringify(cleared)}`);
    await ui.statusItem().locator('.codicon-hubot').waitFor();
    log('status bar after /model - in the other window:', JSON.stringify(await ui.statusItem().innerText()));
  } finally {
    await second.stop();
  }
}
