import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientDocumentSelector, configDocumentSelector, userConfigDir } from '../../src/server/configFiles';
import { isLaunchProblem, planLaunch, type LaunchHost } from '../../src/server/launch';
import { readServerSettings, type ServerSettings } from '../../src/server/settings';

function host(executables: string[], env: Record<string, string> = { PATH: '/usr/bin:/home/me/.local/bin' }): LaunchHost {
  return { env, homeDir: '/home/me', platform: 'linux', isExecutable: (file) => executables.includes(file) };
}

const defaults: ServerSettings = { serverCommand: 'switchman', serverArgs: ['serve'], pythonPath: '', serverEnv: {}, diagnosticsDebounceMs: 150 };

describe('planLaunch', () => {
  it('finds switchman on PATH and starts "switchman serve"', () => {
    const plan = planLaunch(defaults, host(['/home/me/.local/bin/switchman']));
    assert.ok(!isLaunchProblem(plan));
    assert.equal(plan.command, '/home/me/.local/bin/switchman');
    assert.deepEqual(plan.args, ['serve']);
  });

  it('starts the module with a configured Python instead', () => {
    const plan = planLaunch({ ...defaults, pythonPath: '~/venv/bin/python' }, host(['/home/me/venv/bin/python']));
    assert.ok(!isLaunchProblem(plan));
    assert.deepEqual([plan.command, ...plan.args], ['/home/me/venv/bin/python', '-m', 'switchman.server.cli', 'serve']);
  });

  it('says which setting to fix when the program is missing', () => {
    const missing = planLaunch(defaults, host([]));
    assert.ok(isLaunchProblem(missing));
    assert.equal(missing.setting, 'switchman.serverCommand');
    assert.match(missing.message, /not found on PATH.*from a clone of its repository.*not on PyPI/);
    const badPath = planLaunch({ ...defaults, serverCommand: '/opt/nope/switchman' }, host([]));
    assert.ok(isLaunchProblem(badPath));
    assert.match(badPath.message, /"\/opt\/nope\/switchman" was not found \(or is not executable\)/);
    const badPython = planLaunch({ ...defaults, pythonPath: '/nope/python' }, host([]));
    assert.ok(isLaunchProblem(badPython) && badPython.setting === 'switchman.pythonPath');
  });

  it('adds switchman.serverEnv to the environment, expanding ~', () => {
    const plan = planLaunch({ ...defaults, serverCommand: '/opt/switchman', serverEnv: { SWITCHMAN_CONFIG_DIR: '~/cfg' } },
      host(['/opt/switchman'], { PATH: '/usr/bin', LANG: 'C' }));
    assert.ok(!isLaunchProblem(plan));
    assert.deepEqual(plan.env, { PATH: '/usr/bin', LANG: 'C', SWITCHMAN_CONFIG_DIR: '/home/me/cfg' });
  });
});

describe('settings', () => {
  it('reads defaults and stringifies env values', () => {
    const values: Record<string, unknown> = { serverCommand: '  ', serverEnv: { A: 1, B: null } };
    const settings = readServerSettings({ get: <T>(key: string, fallback: T) => (key in values ? values[key] as T : fallback) });
    assert.equal(settings.serverCommand, 'switchman');
    assert.deepEqual(settings.serverEnv, { A: '1' });
  });
});

describe('configuration files', () => {
  it('locates the user config folder like the daemon does', () => {
    assert.equal(userConfigDir({}, '/home/me', 'linux'), '/home/me/.config/switchman');
    assert.equal(userConfigDir({ XDG_CONFIG_HOME: '/x' }, '/home/me', 'linux'), '/x/switchman');
    assert.equal(userConfigDir({ SWITCHMAN_CONFIG_DIR: '/etc/sm' }, '/home/me', 'linux'), '/etc/sm');
    assert.equal(userConfigDir({}, '/Users/me', 'darwin'), '/Users/me/Library/Application Support/switchman');
  });

  it('selects the three user files and every workspace routing.yaml and profiles.yaml', () => {
    assert.deepEqual(configDocumentSelector('/home/me/.config/switchman'), [
      { scheme: 'file', pattern: '/home/me/.config/switchman/routing.yaml' },
      { scheme: 'file', pattern: '/home/me/.config/switchman/models.yaml' },
      { scheme: 'file', pattern: '/home/me/.config/switchman/profiles.yaml' },
      { scheme: 'file', pattern: '**/.switchman/routing.yaml' },
      { scheme: 'file', pattern: '**/.switchman/profiles.yaml' },
    ]);
  });

  it('gives the language client every file document (sharedDocuments.ts decides which are sent)', () => {
    const selector = clientDocumentSelector('/c');
    assert.deepEqual(selector.slice(0, -1), configDocumentSelector('/c'));
    assert.deepEqual(selector.at(-1), { scheme: 'file' });
  });
});
