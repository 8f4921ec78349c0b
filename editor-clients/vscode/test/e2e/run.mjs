// End-to-end test of the packaged extension in a real VS Code (code-server 4.100.3) driven by
// Playwright with Debian's chromium, against the real daemon and the fake model provider.
//
//   node test/e2e/run.mjs            (run it inside `unshare -n` with lo up: loopback only)
//
// Environment (all optional): SWITCHMAN_REPO (repository root), SWITCHMAN_PYTHON (a Python with
// switchman installed, default $SWITCHMAN_REPO/.venv/bin/python), SWITCHMAN_BIN (the `switchman`
// program), E2E_WORK (scratch folder, default a new temp folder), E2E_ARTIFACTS (screenshots and
// logs, default $SWITCHMAN_REPO/test-artifacts/vscode), CHROMIUM (default /usr/bin/chromium).
// Exit status 0 when every step passed.
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { FakeProvider, freePort, log, readPortFile, startProcess, stopProcess, until } from './support.mjs';
import { runScenario } from './scenario.mjs';

const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REPO = resolve(process.env.SWITCHMAN_REPO ?? join(HERE, '../..'));
const PYTHON = process.env.SWITCHMAN_PYTHON ?? join(REPO, '.venv/bin/python');
const SWITCHMAN = process.env.SWITCHMAN_BIN ?? join(dirname(PYTHON), 'switchman');
const WORK = process.env.E2E_WORK ?? mkdtempSync(join(tmpdir(), 'switchman-vscode-e2e-'));
const ARTIFACTS = resolve(process.env.E2E_ARTIFACTS ?? join(REPO, 'test-artifacts/vscode'));
const CODE_SERVER = join(HERE, '.e2e/code-server/node_modules/.bin/code-server');
const VSIX = join(HERE, 'dist/switchman.vsix');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

const BROKEN_ROUTING = `# A workspace policy with a typo in the model name: the editor must flag it.
rules:
  - name: docs questions
    when:
      message_matches: "(?i)readme"
    use: opsu
`;

function requireFiles() {
  const missing = [[CODE_SERVER, 'run scripts/setup-e2e.sh'], [VSIX, 'run scripts/setup-e2e.sh'],
    [PYTHON, 'run `make` in the repository (creates .venv)'], [SWITCHMAN, 'pip install -e . in the venv'],
    [CHROMIUM, 'apt-get install chromium']].filter(([file]) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`missing prerequisites:\n${missing.map(([file, fix]) => `  ${file}: ${fix}`).join('\n')}`);
  }
}

function layout() {
  const dirs = {
    home: join(WORK, 'home'), tmp: join(WORK, 'tmp'), config: join(WORK, 'switchman-config'),
    data: join(WORK, 'switchman-data'), workspace: join(WORK, 'project'), userData: join(WORK, 'code-server/user-data'),
    extensions: join(WORK, 'code-server/extensions'), logs: join(WORK, 'logs'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  mkdirSync(join(dirs.workspace, '.switchman'), { recursive: true });
  mkdirSync(join(dirs.userData, 'User'), { recursive: true });
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  return dirs;
}

/** Everything the tools write goes under WORK: nothing touches the real home or /tmp. */
function isolatedEnv(dirs) {
  return {
    ...process.env,
    HOME: dirs.home, TMPDIR: dirs.tmp, XDG_CONFIG_HOME: join(dirs.home, '.config'),
    XDG_DATA_HOME: join(dirs.home, '.local/share'), XDG_CACHE_HOME: join(dirs.home, '.cache'),
    EXTENSIONS_GALLERY: '{}', // no marketplace at all
  };
}

function writeWorkspace(dirs) {
  writeFileSync(join(dirs.workspace, '.switchman/routing.yaml'), BROKEN_ROUTING);
  writeFileSync(join(dirs.workspace, 'README.md'), '# Demo project\n\nA login handler that needs a commit message.\n');
  mkdirSync(join(dirs.workspace, 'src'), { recursive: true });
  writeFileSync(join(dirs.workspace, 'src/login.py'), 'def login(user, password):\n    return user == "admin"\n');
}

function writeDaemonConfig(dirs, fakePort) {
  writeFileSync(join(dirs.config, 'models.yaml'), `providers:
  anthropic: {base_url: 'http://127.0.0.1:${fakePort}'}
  openai: {base_url: 'http://127.0.0.1:${fakePort}/v1'}
`);
}

/** What the extension adds to the daemon's environment (a second window's daemon gets the same). */
function daemonEnv(dirs) {
  return {
    SWITCHMAN_CONFIG_DIR: dirs.config, SWITCHMAN_DATA_DIR: dirs.data, ANTHROPIC_API_KEY: 'test-key',
    OPENAI_API_KEY: 'test-key', SWITCHMAN_RETRY_BASE_SECONDS: '0',
  };
}

function writeCodeServerConfig(dirs, port) {
  const config = join(WORK, 'code-server/config.yaml');
  writeFileSync(config, [
    `bind-addr: 127.0.0.1:${port}`, 'auth: none', 'cert: false', 'disable-telemetry: true', 'disable-update-check: true',
    'disable-workspace-trust: true', 'disable-getting-started-override: true', `user-data-dir: ${dirs.userData}`,
    `extensions-dir: ${dirs.extensions}`, '',
  ].join('\n'));
  const settings = {
    'telemetry.telemetryLevel': 'off', 'update.mode': 'none', 'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false, 'extensions.ignoreRecommendations': true, 'workbench.enableExperiments': false,
    'workbench.startupEditor': 'none', 'workbench.tips.enabled': false, 'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'security.workspace.trust.enabled': false, 'npm.fetchOnlinePackageInfo': false, 'json.schemaDownload.enable': false,
    'typescript.disableAutomaticTypeAcquisition': true, 'git.enabled': false, 'git.autofetch': false,
    'github.gitAuthentication': false, 'chat.commandCenter.enabled': false, 'window.commandCenter': false,
    // VS Code for the web (code-server) saves after a delay by default; desktop VS Code does not, and the
    // scenario checks that Switchman's edits are saved by the extension, not by auto-save.
    'files.autoSave': 'off',
    'editor.minimap.enabled': false, 'editor.stickyScroll.enabled': false, 'workbench.colorTheme': 'Default Dark Modern', 'window.zoomLevel': 0,
    'switchman.serverCommand': SWITCHMAN,
    'switchman.serverEnv': daemonEnv(dirs),
    'switchman.trace.server': 'messages',
  };
  writeFileSync(join(dirs.userData, 'User/settings.json'), JSON.stringify(settings, null, 2));
  return config;
}

function installExtension(env, config) {
  const result = spawnSync(CODE_SERVER, ['--config', config, '--install-extension', VSIX], { env, encoding: 'utf8', timeout: 120000 });
  if (result.status !== 0) throw new Error(`installing the .vsix failed:\n${result.stdout}\n${result.stderr}`);
  log('installed', VSIX);
}

/** Keep the daemon's and VS Code's logs with the screenshots. */
function collectLogs(dirs) {
  const target = join(ARTIFACTS, 'logs');
  mkdirSync(target, { recursive: true });
  cpSync(dirs.logs, target, { recursive: true });
  const vscodeLogs = join(dirs.userData, 'logs');
  if (existsSync(vscodeLogs)) {
    for (const file of walk(vscodeLogs)) {
      if (/Switchman|exthost|remoteexthost/i.test(file)) cpSync(file, join(target, file.slice(vscodeLogs.length + 1).replaceAll('/', '_')));
    }
  }
}

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

async function main() {
  requireFiles();
  const dirs = layout();
  const env = isolatedEnv(dirs);
  log('work folder', WORK, 'artifacts', ARTIFACTS);
  const processes = [];
  try {
    const portFile = join(WORK, 'fake-provider.port');
    const fakeProcess = startProcess(PYTHON, ['-m', 'tests.support.fake_provider', '--port', '0', '--port-file', portFile],
      { cwd: REPO, env }, openSync(join(dirs.logs, 'fake-provider.log'), 'w'));
    processes.push(fakeProcess);
    const fakePort = await readPortFile(portFile, fakeProcess);
    const fake = new FakeProvider(fakePort);
    await fake.health();
    log('fake provider on port', fakePort);

    writeWorkspace(dirs);
    writeDaemonConfig(dirs, fakePort);
    const port = await freePort();
    const config = writeCodeServerConfig(dirs, port);
    installExtension(env, config);

    const codeServer = startProcess(CODE_SERVER, ['--config', config], { env }, openSync(join(dirs.logs, 'code-server.log'), 'w'));
    processes.push(codeServer);
    const url = `http://127.0.0.1:${port}`;
    await until('code-server /healthz', async () => {
      if (codeServer.exitInfo) throw new Error(`code-server exited: ${JSON.stringify(codeServer.exitInfo)}`);
      return (await fetch(`${url}/healthz`)).ok;
    }, { timeoutMs: 60000, intervalMs: 200 });
    log('code-server up at', url);

    // The scenario reads the daemon's pattern store back with the `switchman` CLI, as a user would.
    const store = { switchman: SWITCHMAN, data: dirs.data, env };
    // A second editor window's daemon on the same folders, started by the scenario.
    const daemon = { switchman: SWITCHMAN, env: { ...env, ...daemonEnv(dirs) }, logs: dirs.logs };
    await runScenario({ url, workspace: dirs.workspace, fake, artifacts: ARTIFACTS, chromium: CHROMIUM, env, store, daemon });
    log('PASS');
  } finally {
    for (const child of processes.reverse()) await stopProcess(child);
    collectLogs(dirs);
    if (!process.env.E2E_KEEP_WORK && !process.env.E2E_WORK) rmSync(WORK, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(`[e2e] FAIL: ${error.stack ?? error}`);
  process.exit(1);
});
